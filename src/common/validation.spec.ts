import { IsInt, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { capFieldErrors, MAX_FIELD_ERRORS, ValidationFailed } from './errors';
import { flattenValidationErrors } from './validation';

class Sample {
  @IsString()
  @MinLength(1)
  @Matches(/^[a-z]+$/)
  name: string;

  @IsOptional()
  @IsInt()
  count?: number;
}

async function errorsOf(body: Record<string, unknown>) {
  const errors = await validate(plainToInstance(Sample, body), {
    whitelist: true,
    forbidNonWhitelisted: true,
    validationError: { target: false, value: true },
  });
  return flattenValidationErrors(errors);
}

describe('flattenValidationErrors', () => {
  it('a missing field is one message, "is required"', async () => {
    expect(await errorsOf({})).toEqual([{ field: 'name', message: 'is required' }]);
    expect(await errorsOf({ name: null })).toEqual([{ field: 'name', message: 'is required' }]);
  });

  it('a wrong value keeps the messages of the rules it breaks, without echoing it', async () => {
    const errors = await errorsOf({ name: 'ABC9', count: 'x' });
    expect(errors.map((e) => e.field).sort()).toEqual(['count', 'name']);
    expect(JSON.stringify(errors)).not.toContain('ABC9');
  });

  it('an unknown property, even null, "should not exist"', async () => {
    expect(await errorsOf({ name: 'a', extra: null })).toEqual([
      { field: 'extra', message: 'should not exist' },
    ]);
  });
});

describe('capFieldErrors', () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ field: `f${i}`, message: 'is wrong' }));

  it(`keeps ${MAX_FIELD_ERRORS} errors and says how many more there were`, () => {
    const capped = capFieldErrors(many(25));
    expect(capped).toHaveLength(MAX_FIELD_ERRORS + 1);
    expect(capped[MAX_FIELD_ERRORS]).toEqual({ field: 'body', message: 'and 5 more' });
  });

  it('leaves 20 or fewer as they are', () => expect(capFieldErrors(many(20))).toEqual(many(20)));

  it('ValidationFailed answers the capped list, in errors and in the detail', () => {
    const e = new ValidationFailed(many(7000));
    expect(e.errors).toHaveLength(MAX_FIELD_ERRORS + 1);
    expect(e.extra.errors).toBe(e.errors);
    expect(e.message).toContain('and 6980 more');
    expect(e.message).not.toContain('f20:');
  });
});
