/**
 * A value and its JSON text, made once: for a value written as JSON in two places (a create's
 * answer is both the reply's body and the row's stored `response_body`, which is also its event's
 * data). Serialised anywhere else, it is its value (toJSON), so no path writes it wrongly.
 */
export class JsonText<T = unknown> {
  /** JSON.stringify(value), as sent and stored. */
  readonly text: string;

  constructor(readonly value: T) {
    this.text = JSON.stringify(value);
  }

  toJSON(): T {
    return this.value;
  }
}
