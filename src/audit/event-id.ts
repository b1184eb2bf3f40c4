/**
 * A shop event's public id: `evt_` + a version-7 UUID (RFC 9562: 48 bits of Unix milliseconds,
 * the version, random bits), made by the database (`evt_id()`, migration PublicEventIds). Time
 * ordered to the millisecond and unique across databases, so a receiver may deduplicate on it
 * across environments.
 */
export const EVENT_ID_PATTERN =
  /^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
