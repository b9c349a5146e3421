/** A response of the sample app: its status and parsed JSON body. */
export interface Answer {
  readonly status: number;
  readonly body: { readonly message?: unknown; readonly code?: unknown; [field: string]: unknown };
}

// Generous: a request to a SIGSTOPped instance is answered only after it is resumed.
const REQUEST_TIMEOUT_MS = 20_000;

export async function send(
  url: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : {} };
}

export function buy(url: string, productId: number, userId: string): Promise<Answer> {
  return send(url, 'POST', `/products/${productId}/buy`, JSON.stringify({ userId }));
}

/** Creates or resets a product; fails the test if the app refuses. */
export async function putStock(url: string, productId: number, stock: number): Promise<void> {
  const answer = await send(url, 'PUT', `/products/${productId}`, JSON.stringify({ stock }));
  if (answer.status !== 200) {
    throw new Error(
      `PUT /products/${productId} answered ${answer.status}: ${JSON.stringify(answer.body)}`,
    );
  }
}

export async function viewProduct(url: string, productId: number) {
  const answer = await send(url, 'GET', `/products/${productId}`);
  return answer.body as { id: number; stock: number; sold: number; orders: number };
}

/** `201`, or the status and the refusal's code, e.g. `409 SOLD_OUT`. */
export function outcomeOf({ status, body }: Answer): string {
  return status === 201 ? '201' : `${status} ${String(body.code ?? body.message)}`;
}
