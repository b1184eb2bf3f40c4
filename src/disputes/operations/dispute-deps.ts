import type { DataSource } from 'typeorm';
import type { AuditService } from '../../audit/audit.service';
import type { DisputeView } from '../dto/dispute.view';

/** What every dispute operation works with (given by DisputesService, the module's one provider). */
export interface DisputeDeps {
  dataSource: DataSource;
  audit: AuditService;
  /** The payment shop: disputes are of its invoices, written and found under its id. */
  shopId: number;
}

/** A create's answer: 201 with the dispute; `replayed` for an identical repeat. */
export interface DisputeCreated {
  code: 201;
  body: DisputeView;
  replayed?: boolean;
}
