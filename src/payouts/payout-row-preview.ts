import { Injectable } from '@nestjs/common';
import type { FieldError } from '../common/errors';
import type { CreatePayoutDto } from './dto/payout-requests.dto';

/**
 * What a dry run adds to a row's checks beyond the create body and the payway (approval, caps):
 * the row's problems, none when it would pass. Bound to PAYOUT_ROW_PREVIEW; the default sees
 * nothing to add.
 */
export interface PayoutRowPreview {
  preview(row: CreatePayoutDto): Promise<FieldError[]>;
}

export const PAYOUT_ROW_PREVIEW = Symbol('PAYOUT_ROW_PREVIEW');

@Injectable()
export class NoPayoutRowPreview implements PayoutRowPreview {
  preview(): Promise<FieldError[]> {
    return Promise.resolve([]);
  }
}
