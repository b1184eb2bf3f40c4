import { ApiExtraModels, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { sameShape } from '../../common/openapi';
import type {
  AccountInfoFieldView,
  AddOnFieldView,
  FeeConfigView,
  FeePartConfigView,
  PaymentPaywayView,
  PaywayGroupView,
  PaywayListView,
  PayoutPaywayView,
} from '../payway.view';

/**
 * OpenAPI schemas of GET /payways: the gateway's groups in camelCase, typed; `sameShape` keeps
 * each equal to the type payway.view.ts returns. Money is a decimal string in the payway's
 * currency, written with the gateway's digits; null where the gateway gave none.
 */

const CARD = 'card_core_payin_rub[mock_server,success_with_callback]';
const TO_CARD = 'qiwi_topup_rub_to_card[mock_server,success]';

@ApiSchema({ name: 'PaywayFee' })
export class FeeConfigSchema {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Percent of the amount',
    example: '2.5',
  })
  percent: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Fixed fee', example: '0.0' })
  fix: string | null;
}
sameShape<FeeConfigView, FeeConfigSchema>(true);

@ApiSchema({ name: 'PaywayFeePart' })
export class FeePartConfigSchema {
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The payer's share of the percent fee",
    example: '1.0',
  })
  percentPart: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The payer's share of the fixed fee",
    example: '1.0',
  })
  fixPart: string | null;
}
sameShape<FeePartConfigView, FeePartConfigSchema>(true);

@ApiSchema({ name: 'PaywayAddOnField' })
export class AddOnFieldSchema {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { en: 'Phone', ru: 'Телефон' },
  })
  label: Record<string, string> | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    description: "The gateway's `comment`",
    example: { en: 'Digits only' },
  })
  hint: Record<string, string> | null;
  @ApiProperty({ type: String, nullable: true, example: '79001234567' }) example: string | null;
  @ApiProperty({ type: String, nullable: true, example: '^7\\d{10}$' }) regex: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+' }) prefix: string | null;
}
sameShape<AddOnFieldView, AddOnFieldSchema>(true);

@ApiSchema({ name: 'PaywayAccountField' })
export class AccountInfoFieldSchema {
  @ApiProperty({ type: String, nullable: true, example: '^\\d{16,19}$' }) regex: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Card number' }) title: string | null;
}
sameShape<AccountInfoFieldView, AccountInfoFieldSchema>(true);

@ApiSchema({ name: 'PaymentPayway' })
@ApiExtraModels(AddOnFieldSchema)
export class PaymentPaywaySchema {
  @ApiProperty({ type: Number, nullable: true, example: 1101 }) id: number | null;
  @ApiProperty({ description: 'The value to send as `payway`, exactly', example: CARD })
  alias: string;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'ISO 4217 numeric code of the payway’s currency',
    example: 643,
  })
  currency: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Lowest amount (decimal string, payway currency)',
    example: '10.0',
  })
  minAmount: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Highest amount (decimal string, payway currency)',
    example: '500000.0',
  })
  maxAmount: string | null;
  @ApiProperty({ type: FeeConfigSchema }) feeConfig: FeeConfigSchema;
  @ApiProperty({ type: FeePartConfigSchema }) feePartConfig: FeePartConfigSchema;
  @ApiProperty({ example: true }) isActive: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(AddOnFieldSchema) },
    description: 'Extra fields the payway needs (`extras` of the invoice), by name',
    example: {
      phone: {
        label: { en: 'Phone' },
        hint: { en: 'Digits only' },
        example: '79001234567',
        regex: '^7\\d{10}$',
        prefix: '+',
      },
    },
  })
  addOnsConfig: Record<string, AddOnFieldSchema>;
}
sameShape<PaymentPaywayView, PaymentPaywaySchema>(true);

@ApiSchema({ name: 'PayoutPayway' })
@ApiExtraModels(AccountInfoFieldSchema)
export class PayoutPaywaySchema {
  @ApiProperty({ description: 'The value to send as `payway`, exactly', example: TO_CARD })
  alias: string;
  @ApiProperty({ type: Number, nullable: true, example: 643 }) currency: number | null;
  @ApiProperty({ type: String, nullable: true, example: '100.0' }) minAmount: string | null;
  @ApiProperty({ type: String, nullable: true, example: '100000.0' }) maxAmount: string | null;
  @ApiProperty({ type: FeeConfigSchema }) feeConfig: FeeConfigSchema;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(AccountInfoFieldSchema) },
    description: 'Account details the payout needs (`accountDetails`), by name',
    example: { account: { regex: '^\\d{16,19}$', title: 'Card number' } },
  })
  accountInfoConfig: Record<string, AccountInfoFieldSchema>;
  @ApiProperty({ type: 'object', additionalProperties: true, example: {} })
  paysystemData: Record<string, unknown>;
}
sameShape<PayoutPaywayView, PayoutPaywaySchema>(true);

@ApiSchema({ name: 'PaymentPaywayGroup' })
export class PaymentPaywayGroupSchema {
  @ApiProperty({ type: Number, nullable: true, example: 1 }) id: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'Bank cards' }) name: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 1 }) rating: number | null;
  @ApiProperty({ type: [PaymentPaywaySchema] }) payways: PaymentPaywaySchema[];
}
sameShape<PaywayGroupView<PaymentPaywayView>, PaymentPaywayGroupSchema>(true);

@ApiSchema({ name: 'PayoutPaywayGroup' })
export class PayoutPaywayGroupSchema {
  @ApiProperty({ type: Number, nullable: true, example: 1 }) id: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'To cards' }) name: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 1 }) rating: number | null;
  @ApiProperty({ type: [PayoutPaywaySchema] }) payways: PayoutPaywaySchema[];
}
sameShape<PaywayGroupView<PayoutPaywayView>, PayoutPaywayGroupSchema>(true);

@ApiSchema({ name: 'PaymentPaywayList' })
export class PaymentPaywayListSchema {
  @ApiProperty({ enum: ['payment'], example: 'payment' }) direction: 'payment';
  @ApiProperty({ format: 'date-time', example: '2026-01-15T09:50:00.000Z' }) fetchedAt: string;
  @ApiProperty({ type: [PaymentPaywayGroupSchema] }) groups: PaymentPaywayGroupSchema[];
}

@ApiSchema({ name: 'PayoutPaywayList' })
export class PayoutPaywayListSchema {
  @ApiProperty({ enum: ['payout'], example: 'payout' }) direction: 'payout';
  @ApiProperty({ format: 'date-time', example: '2026-01-15T09:50:00.000Z' }) fetchedAt: string;
  @ApiProperty({ type: [PayoutPaywayGroupSchema] }) groups: PayoutPaywayGroupSchema[];
}
sameShape<PaywayListView, PaymentPaywayListSchema | PayoutPaywayListSchema>(true);

/** The answer of GET /payways: the list of the direction asked for, told apart by `direction`. */
export const PAYWAY_LIST_SCHEMA = {
  oneOf: [
    { $ref: getSchemaPath(PaymentPaywayListSchema) },
    { $ref: getSchemaPath(PayoutPaywayListSchema) },
  ],
  discriminator: {
    propertyName: 'direction',
    mapping: {
      payment: getSchemaPath(PaymentPaywayListSchema),
      payout: getSchemaPath(PayoutPaywayListSchema),
    },
  },
};
