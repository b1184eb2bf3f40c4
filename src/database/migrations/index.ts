import { InitialSchema1795270554236 } from './1795270554236-InitialSchema';
import { AtomicPhasesAndAttention1795324765936 } from './1795324765936-AtomicPhasesAndAttention';
import { AdminConsoleSessions1795324789342 } from './1795324789342-AdminConsoleSessions';
import { ShopEvents1795324818287 } from './1795324818287-ShopEvents';
import { GatewayShopPerRow1795324912080 } from './1795324912080-GatewayShopPerRow';
import { SealedPaymentTokens1795324915723 } from './1795324915723-SealedPaymentTokens';
import { AuditKeyIdAndUnverifiedSample1795324927953 } from './1795324927953-AuditKeyIdAndUnverifiedSample';
import { WatchFlaggedObjects1795500000001 } from './1795500000001-WatchFlaggedObjects';
import { UnholdRequestAndHoldExpiry1795500000002 } from './1795500000002-UnholdRequestAndHoldExpiry';
import { PayoutFingerprintKey1795500000003 } from './1795500000003-PayoutFingerprintKey';
import { InvoiceRefundPendingAmount1795500000004 } from './1795500000004-InvoiceRefundPendingAmount';
import { NotificationKeyOfSignedText1795500000005 } from './1795500000005-NotificationKeyOfSignedText';
import { AdminSessionsLastSeen1795500000006 } from './1795500000006-AdminSessionsLastSeen';
import { IdempotencyConflictsAndMetadata1795600000001 } from './1795600000001-IdempotencyConflictsAndMetadata';
import { BoundedTables1795600000006 } from './1795600000006-BoundedTables';
import { PublicEventIds1795600000007 } from './1795600000007-PublicEventIds';
import { PayoutApprovals1795700000001 } from './1795700000001-PayoutApprovals';
import { PayoutRecipientIndex1795700000002 } from './1795700000002-PayoutRecipientIndex';
import { PayoutBatches1795700000003 } from './1795700000003-PayoutBatches';
import { PaymentTokenRegistry1795700000004 } from './1795700000004-PaymentTokenRegistry';
import { ConsoleSavedSearches1795700000005 } from './1795700000005-ConsoleSavedSearches';
import { InvoiceUpdatesHot1795800000001 } from './1795800000001-InvoiceUpdatesHot';
import { PayoutSentAtAndCreator1795900000001 } from './1795900000001-PayoutSentAtAndCreator';
import { PayoutBatchCancelAndKeys1795900000010 } from './1795900000010-PayoutBatchCancelAndKeys';
import { NotificationStatusEffect1795900000020 } from './1795900000020-NotificationStatusEffect';
import { AdminSessionFlash1795900000040 } from './1795900000040-AdminSessionFlash';
import { Ledger1795900000060 } from './1795900000060-Ledger';
import { LedgerLegsInline1795900000070 } from './1795900000070-LedgerLegsInline';
import { LedgerAdjustmentKeys1795900000080 } from './1795900000080-LedgerAdjustmentKeys';
import { LedgerPositions1796500000010 } from './1796500000010-LedgerPositions';
import { DisputesAndChargebacks1796600000200 } from './1796600000200-DisputesAndChargebacks';
import { PayoutApprovalSight1796600000300 } from './1796600000300-PayoutApprovalSight';
import { InvoiceRoomForAnswers1796600000400 } from './1796600000400-InvoiceRoomForAnswers';
import { EventsOneObjectIndex1796600000500 } from './1796600000500-EventsOneObjectIndex';
import { EventIdsInPlpgsql1796700000100 } from './1796700000100-EventIdsInPlpgsql';
import { EventTraceParent1795900000090 } from './1795900000090-EventTraceParent';
import { ServiceClockAndHoldPolicy1796300000001 } from './1796300000001-ServiceClockAndHoldPolicy';
import { NotificationKindInKey1796400000010 } from './1796400000010-NotificationKindInKey';
import { PaymentLinks1796600000100 } from './1796600000100-PaymentLinks';

/** Every migration, in order. Add new ones here (generated with `npm run migration:generate`). */
export const MIGRATIONS = [
  InitialSchema1795270554236,
  AtomicPhasesAndAttention1795324765936,
  AdminConsoleSessions1795324789342,
  ShopEvents1795324818287,
  GatewayShopPerRow1795324912080,
  SealedPaymentTokens1795324915723,
  AuditKeyIdAndUnverifiedSample1795324927953,
  WatchFlaggedObjects1795500000001,
  UnholdRequestAndHoldExpiry1795500000002,
  PayoutFingerprintKey1795500000003,
  InvoiceRefundPendingAmount1795500000004,
  NotificationKeyOfSignedText1795500000005,
  AdminSessionsLastSeen1795500000006,
  IdempotencyConflictsAndMetadata1795600000001,
  BoundedTables1795600000006,
  PublicEventIds1795600000007,
  PayoutApprovals1795700000001,
  PayoutRecipientIndex1795700000002,
  PayoutBatches1795700000003,
  PaymentTokenRegistry1795700000004,
  ConsoleSavedSearches1795700000005,
  InvoiceUpdatesHot1795800000001,
  PayoutSentAtAndCreator1795900000001,
  PayoutBatchCancelAndKeys1795900000010,
  NotificationStatusEffect1795900000020,
  AdminSessionFlash1795900000040,
  Ledger1795900000060,
  LedgerLegsInline1795900000070,
  LedgerAdjustmentKeys1795900000080,
  EventTraceParent1795900000090,
  ServiceClockAndHoldPolicy1796300000001,
  NotificationKindInKey1796400000010,
  LedgerPositions1796500000010,
  PaymentLinks1796600000100,
  DisputesAndChargebacks1796600000200,
  PayoutApprovalSight1796600000300,
  InvoiceRoomForAnswers1796600000400,
  EventsOneObjectIndex1796600000500,
  EventIdsInPlpgsql1796700000100,
];
