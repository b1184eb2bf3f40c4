import {
  ValidationTypes,
  type ValidationArguments,
  type ValidatorConstraintInterface,
  type ValidatorOptions,
} from 'class-validator';
import { getMetadataStorage } from 'class-validator/cjs/metadata/MetadataStorage';

/**
 * A quick yes for a body that class-validator would pass ("validation compiled once").
 *
 * class-validator walks its metadata afresh for every object it validates: it filters and groups
 * the class's metadata, builds an error object per property, and throws all of that away when
 * nothing is wrong. On `POST /invoices` that was 4.5 % of the service's CPU and 32 KB of
 * allocation per create. This check runs the very same validators (each decorator's own
 * `validate`, with the same arguments) from a plan made once per class, and answers only
 * "passes" or "not sure":
 *
 * - "passes" is given only when class-validator, under the pipe's options, would report no error;
 * - on anything else (a failing rule, an unknown key, a nested value that is not an instance of
 *   a planned class, an async rule, `each` on a collection) it answers "not sure", and the caller
 *   runs class-validator itself, which makes the errors. Errors are never made here.
 *
 * The plan mirrors class-validator 0.15's ValidationExecutor: the same metadata list
 * (`getTargetValidationMetadatas`, inheritance and its de-duplication included), the whitelist
 * (every own key must carry metadata), conditional rules first (`IsOptional`: a false skips the
 * property), then `IsDefined` and the custom rules, then nested objects. A class whose metadata
 * holds a kind this does not know (schemas, promise validation) gets no plan. The differential
 * test (compiled-validation.spec.ts) holds it to class-validator's verdict on every DTO.
 */

type Storage = ReturnType<typeof getMetadataStorage>;
type Metadata = ReturnType<Storage['getTargetValidationMetadatas']>[number];
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class-validator's own key type
type Class = Function;

interface Rule {
  metadata: Metadata;
  /**
   * The rule's validators, resolved once: class-validator takes each from its container on every
   * call, and the default container keeps one instance per class (the service sets no other).
   */
  validators: ValidatorConstraintInterface[];
}

export interface PropertyPlan {
  name: string;
  /** `IsOptional` and `ValidateIf`: all are evaluated; any false skips the property. */
  conditions: Metadata[];
  /** `IsDefined` first, then the custom rules, as class-validator runs them. */
  rules: Rule[];
  /** `ValidateNested` (however many, each checks the same value). */
  nested: boolean;
}

export interface Plan {
  allowed: Set<string>;
  properties: PropertyPlan[];
}

const KNOWN_TYPES = new Set<string>([
  ValidationTypes.IS_DEFINED,
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.NESTED_VALIDATION,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.WHITELIST,
]);

const plans = new Map<Class, Plan | null>();

/** The class's plan, made on first use (every decorator has run by then); null: never quick. */
export function planOf(cls: Class): Plan | null {
  let plan = plans.get(cls);
  if (plan === undefined) {
    plan = makePlan(cls);
    plans.set(cls, plan);
  }
  return plan;
}

function makePlan(cls: Class): Plan | null {
  // The arguments class-validator's executor passes with no groups, `always` and `strictGroups`
  // off; the schema name only matters for string targets (schemas), refused below.
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(
    cls,
    '',
    false,
    false,
    undefined,
  );
  if (metadatas.length === 0) return null;
  const byName = new Map<string, Metadata[]>();
  for (const m of metadatas) {
    if (typeof m.target === 'string' || !KNOWN_TYPES.has(m.type)) return null;
    const list = byName.get(m.propertyName) ?? [];
    list.push(m);
    byName.set(m.propertyName, list);
  }
  const properties: PropertyPlan[] = [];
  for (const [name, list] of byName) {
    const defined = list.filter((m) => m.type === ValidationTypes.IS_DEFINED);
    const custom = list.filter((m) => m.type === ValidationTypes.CUSTOM_VALIDATION);
    properties.push({
      name,
      conditions: list.filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION),
      rules: [...defined, ...custom].map((metadata) => ({
        metadata,
        validators: getMetadataStorage()
          .getTargetValidatorConstraints(metadata.constraintCls)
          .map((c) => c.instance),
      })),
      nested: list.some((m) => m.type === ValidationTypes.NESTED_VALIDATION),
    });
  }
  return { allowed: new Set(byName.keys()), properties };
}

const isPromise = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

const isCollection = (v: unknown): boolean =>
  Array.isArray(v) || v instanceof Set || v instanceof Map;

/** The options this check was written for (the pipe's); any other set goes to class-validator. */
export function quickCheckApplies(o: ValidatorOptions | undefined): boolean {
  return (
    o !== undefined &&
    o.whitelist === true &&
    o.forbidNonWhitelisted === true &&
    o.forbidUnknownValues === false &&
    !o.skipMissingProperties &&
    !o.skipNullProperties &&
    !o.skipUndefinedProperties &&
    !o.stopAtFirstError &&
    !o.always &&
    !o.strictGroups &&
    (o.groups === undefined || o.groups.length === 0)
  );
}

/** True only when class-validator would find nothing wrong with `object` (see above). */
export function passesQuickly(object: object): boolean {
  const plan = planOf(object.constructor);
  return plan !== null && passes(object as Record<string, unknown>, plan);
}

function passes(object: Record<string, unknown>, plan: Plan): boolean {
  for (const key of Object.keys(object)) if (!plan.allowed.has(key)) return false;
  for (const p of plan.properties) {
    const value = object[p.name];
    let applies = true;
    for (const c of p.conditions)
      applies =
        Boolean((c.constraints[0] as (o: object, v: unknown) => boolean)(object, value)) && applies;
    if (!applies) continue;
    for (const rule of p.rules) if (!rulePasses(object, value, rule)) return false;
    if (p.nested && value !== undefined) {
      if (isCollection(value) || !(value instanceof Object)) return false;
      const inner = planOf((value as object).constructor);
      if (inner === null || !passes(value as Record<string, unknown>, inner)) return false;
    }
  }
  return true;
}

function rulePasses(
  object: Record<string, unknown>,
  value: unknown,
  { metadata: m, validators }: Rule,
): boolean {
  if (m.validateIf && !m.validateIf(object, value)) return true;
  if (m.each && isCollection(value)) return false;
  for (const validator of validators) {
    const args: ValidationArguments = {
      targetName: object.constructor ? object.constructor.name : (undefined as unknown as string),
      property: m.propertyName,
      object,
      value,
      constraints: m.constraints,
    };
    const verdict: unknown = validator.validate(value, args);
    if (isPromise(verdict) || !verdict) return false;
  }
  return true;
}
