/** No gateway call in flight for the row. */
export const NO_CALL = { callOwner: null, callLeaseUntil: null } as const;
