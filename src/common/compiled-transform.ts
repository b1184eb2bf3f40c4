import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { TransformationType } from 'class-transformer/cjs/enums';
import { planOf } from './compiled-validation';

/**
 * A request body made an instance of its DTO class as class-transformer's plainToInstance makes
 * it under the pipe's options (none), for the bodies whose making is plain: "transform compiled
 * once", as compiled-validation.ts does for the rules.
 *
 * class-transformer looks its metadata up afresh for every key of every object (type, expose,
 * exclude, transform: four searches per key), and Nest's pipe walks the body twice more before
 * it (array gaps, prototype keys). On `POST /invoices` that was a third of the validation stage's
 * CPU per create. Here each class gets a plan once, and a body is copied by it, or given up on
 * ("not sure": undefined) so that the caller runs Nest's pipe as before. A body is given up on
 * when any part of it is not plain:
 *
 * - a key the class does not declare (the pipe then refuses it, with its name), or one that an
 *   object inherits (`toString`, `__proto__`, `constructor`: class-transformer drops those);
 * - an array anywhere (class-transformer makes arrays its own way), a value that is no JSON value;
 * - a nested value under `@Type` that is not a plain object, or whose class has no plan.
 *
 * A class's `@Transform` functions are called as class-transformer calls them. A class gets no
 * plan (never quick) when it holds what this does not make: `@Expose`, `@Exclude`, a transform
 * tied to groups or versions, a `@Type` to anything but a planned class or Object (Number, Date,
 * a discriminator, a type chosen by the object), a property its prototype has (a method or
 * accessor), or no validation plan. The differential test (compiled-validation.spec.ts) holds the
 * copy to plainToInstance on every DTO: the same classes at every level, the same own
 * properties, the same values.
 */

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class-transformer's key type
type Class = Function;

/** A `@Transform` function, called as class-transformer calls it. */
type TransformFn = (params: {
  value: unknown;
  key: string;
  obj: unknown;
  type: TransformationType;
  options: typeof TRANSFORM_OPTIONS;
}) => unknown;

interface PropertyPlan {
  /** The class its plain-object value becomes (`@Type`), or null: as is. */
  nested: Class | null;
  /** Its `@Transform`s, in class-transformer's order, applied to the value made. */
  transforms: TransformFn[];
}

interface TransformPlan {
  make: new () => object;
  properties: Map<string, PropertyPlan>;
}

/** plainToInstance's options when given none (ClassTransformer's defaults), as a transform sees them. */
const TRANSFORM_OPTIONS = {
  enableCircularCheck: false,
  enableImplicitConversion: false,
  excludeExtraneousValues: false,
  excludePrefixes: undefined,
  exposeDefaultValues: false,
  exposeUnsetFields: true,
  groups: undefined,
  ignoreDecorators: false,
  strategy: undefined,
  targetMaps: undefined,
  version: undefined,
};

const PLAIN_TO_CLASS = TransformationType.PLAIN_TO_CLASS;
const plans = new Map<Class, TransformPlan | null>();
const PLANNING = null;

/** The class's plan, made on first use; null: never quick. */
export function transformPlanOf(cls: Class): TransformPlan | null {
  const known = plans.get(cls);
  if (known !== undefined) return known;
  // A class that names itself (directly or not) is not planned: its copy could recurse.
  plans.set(cls, PLANNING);
  const plan = makePlan(cls);
  plans.set(cls, plan);
  return plan;
}

function makePlan(cls: Class): TransformPlan | null {
  const validation = planOf(cls);
  if (validation === null) return null;
  if (
    defaultMetadataStorage.getStrategy(cls) !== 'none' ||
    defaultMetadataStorage.getExposedProperties(cls, PLAIN_TO_CLASS).length > 0 ||
    defaultMetadataStorage.getExcludedProperties(cls, PLAIN_TO_CLASS).length > 0
  )
    return null;
  const properties = new Map<string, PropertyPlan>();
  const made = new (cls as new () => Record<string, unknown>)();
  for (const name of validation.allowed) {
    // class-transformer leaves a property alone whose name the prototype has or whose default
    // is a function.
    if (name in cls.prototype || typeof made[name] === 'function') return null;
    if (defaultMetadataStorage.findExposeMetadataByCustomName(cls, name) !== undefined) return null;
    const transforms: TransformFn[] = [];
    for (const t of defaultMetadataStorage.findTransformMetadatas(cls, name, PLAIN_TO_CLASS)) {
      // Versions and groups are options this pipe never sets: a transform tied to them is skipped
      // or not by rules not copied here.
      const o = t.options ?? {};
      if (o.groups?.length || o.since !== undefined || o.until !== undefined) return null;
      transforms.push(t.transformFn as TransformFn);
    }
    const type = defaultMetadataStorage.findTypeMetadata(cls, name);
    // A type that depends on the object it is made for (the function reads its argument) or is
    // chosen by a discriminator is not one class: no plan.
    if (type !== undefined && (type.typeFunction.length > 0 || type.options?.discriminator))
      return null;
    // `@Type(() => Object)` makes a plain object what an untyped property makes of it.
    const target = type === undefined ? Object : (type.typeFunction() as unknown);
    if (target === Object) {
      properties.set(name, { nested: null, transforms });
      continue;
    }
    if (typeof target !== 'function' || transformPlanOf(target) === null) return null;
    properties.set(name, { nested: target, transforms });
  }
  return { make: cls as new () => object, properties };
}

/** The instance plainToInstance(cls, value) makes, or undefined when this is not sure of it. */
export function quickInstance(value: unknown, cls: Class): object | undefined {
  const plan = transformPlanOf(cls);
  if (plan === null || !isPlainObject(value)) return undefined;
  const out = new plan.make() as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const property = plan.properties.get(key);
    if (property === undefined) return undefined;
    const v = value[key];
    const { nested, transforms } = property;
    let made =
      nested !== null && typeof v === 'object' && v !== null ? quickInstance(v, nested) : copied(v);
    if (made === undefined) return undefined;
    for (const transform of transforms) {
      made = transform({
        value: made,
        key,
        obj: value,
        type: PLAIN_TO_CLASS,
        options: TRANSFORM_OPTIONS,
      });
      // class-transformer writes whatever the transform gives, undefined included; not sure here.
      if (made === undefined) return undefined;
    }
    out[key] = made;
  }
  return out;
}

/** A value under a property without `@Type`: a JSON primitive as is, a plain object copied. */
function copied(v: unknown): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number')
    return v;
  if (!isPlainObject(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    if (key in Object.prototype) return undefined;
    const inner = copied(v[key]);
    if (inner === undefined) return undefined;
    out[key] = inner;
  }
  return out;
}

/** A JSON object (or a query's, which has no prototype), never an array or an instance. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
