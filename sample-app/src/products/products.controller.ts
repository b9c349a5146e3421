import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ProductIdPipe } from './product-id.pipe.js';
import { ProductsService, type ProductView } from './products.service.js';
import { StockBodyPipe, type StockBody } from './stock.pipe.js';

@Controller('products')
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Put(':id')
  reset(
    @Param('id', ProductIdPipe) id: number,
    @Body(StockBodyPipe) body: StockBody,
  ): Promise<ProductView> {
    return this.products.reset(id, body.stock);
  }

  /** The catalogue: every product's id (the live page lets you choose one to follow). */
  @Get()
  ids(): Promise<number[]> {
    return this.products.ids();
  }

  @Get(':id')
  view(@Param('id', ProductIdPipe) id: number): Promise<ProductView> {
    return this.products.view(id);
  }
}
