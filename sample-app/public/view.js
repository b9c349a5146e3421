// Writes a snapshot's figures, instances and log into the page.
// Plain browser JavaScript, loaded as modules by index.html (no build step).
/* global document */
const saleNames = {
  buy: 'with the lock',
  'buy-unsafe': 'without a lock',
  'buy-atomic': 'as one Lua script',
};

export function showProduct(product, sale, productId) {
  const text = (id, value) => (document.getElementById(id).textContent = value);
  if (!product) {
    ['stock', 'sold', 'oversold'].forEach((id) => text(id, '–'));
    text(
      'sale-state',
      `No product ${productId} in Redis (no sale of it yet, or Redis was restarted).`,
    );
    return;
  }
  const oversold = Math.max(0, product.orders - product.initial);
  text('stock', product.stock);
  text('sold', product.orders);
  text('oversold', oversold);
  document.getElementById('oversold-box').classList.toggle('bad', oversold > 0);
  const shelf = product.initial - product.stock;
  const mismatch = shelf !== product.orders ? ` The stock went down by ${shelf} only.` : '';
  const what = sale
    ? `Sale ${sale.id} ${saleNames[sale.endpoint]} (product ${sale.productId}): ${sale.running ? 'running' : 'finished'}.`
    : '';
  text('sale-state', `${what} ${product.initial} items in stock at the start.${mismatch}`.trim());
}

/**
 * One row per instance; `rates` holds its orders/s and answers/s. Rows are updated in place, so
 * a click on a Pause button is not lost to a row redrawn 4 times a second.
 */
export function showInstances(instances, rates, controls, onPause) {
  const body = document.querySelector('#instances tbody');
  for (const instance of instances) {
    let row = body.querySelector(`tr[data-pid="${instance.pid}"]`);
    if (!row) row = addRow(body, instance, onPause);
    const rate = rates[instance.name] ?? { orders: 0, answers: 0 };
    const values = [
      instance.name,
      instance.pid,
      instance.state,
      rate.orders.toFixed(0),
      rate.answers.toFixed(0),
      instance.held,
    ];
    values.forEach((value, i) => (row.cells[i].textContent = value));
    row.cells[2].className = instance.state === 'up' ? 'state-up' : 'state-other';
    row.querySelector('button').disabled = !controls || instance.state !== 'up';
  }
}

function addRow(body, instance, onPause) {
  const row = body.insertRow();
  row.dataset.pid = instance.pid;
  for (let i = 0; i < 6; i++) row.insertCell();
  const button = document.createElement('button');
  button.textContent = 'Pause 2 s';
  button.addEventListener('click', () => onPause(instance.name.split(' ')[0]));
  row.insertCell().append(button);
  return row;
}

export function showLog(log) {
  const list = document.getElementById('log');
  list.replaceChildren(
    ...[...log].reverse().map((line) => {
      const item = document.createElement('li');
      item.className = line.tone;
      item.textContent = `${new Date(line.at).toLocaleTimeString()} ${line.text}`;
      return item;
    }),
  );
}
