import type { FieldError } from './errors';
import { METADATA_CONSTRAINT, METADATA_FILTER_CONSTRAINT } from './metadata';
import { planOf, type PropertyPlan } from './compiled-validation';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class-validator's own key type
type Class = Function;

/**
 * Keys no field of this API has, that an object answers for without holding them: the members of
 * `Object.prototype` (`toString`, `valueOf`, `hasOwnProperty`, `__proto__`, `constructor`, …),
 * `prototype`, and what the DTO class itself inherits.
 *
 * The validation pipe would never see them: Nest strips `__proto__`, `prototype` and `constructor`
 * from the body before anything reads it (prototype pollution), and class-transformer skips a key
 * whose name the new instance already answers with a function. An unknown field of any other name
 * is a 400 ("should not exist"); these were accepted and dropped without a word.
 */
export function isInheritedName(key: string, cls?: Class): boolean {
  return (
    key === 'prototype' ||
    key in Object.prototype ||
    (cls !== undefined && key in (cls.prototype as object))
  );
}

/** Names the metadata rules own: their keys are checked there (reserved ones refused, others kept). */
const OWN_RULES = new Set<string>([METADATA_CONSTRAINT, METADATA_FILTER_CONSTRAINT]);

/**
 * What the walk does with a declared property's value: nothing (a scalar, or `metadata`, whose
 * own rules read its keys); read its keys (`extras`, an `@IsObject()` map of the caller's names);
 * or walk it as an object of its declared class (`card`, `clientInfo`).
 */
type Inner = 'skip' | 'map' | Class;

function innerOf(cls: Class, p: PropertyPlan): Inner {
  const names = p.rules.map((r) => String(r.metadata.name));
  if (names.some((n) => OWN_RULES.has(n))) return 'skip';
  if (p.nested) {
    const type: unknown = Reflect.getMetadata('design:type', cls.prototype as object, p.name);
    return typeof type === 'function' && type !== Object ? (type as Class) : 'skip';
  }
  return names.includes('isObject') ? 'map' : 'skip';
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const byClass = new Map<Class, Map<string, Inner>>();

/** The class's declared properties by name, each with what the walk does with it; made once per class. */
function propertiesOf(cls: Class): Map<string, Inner> {
  let properties = byClass.get(cls);
  if (properties === undefined) {
    properties = new Map((planOf(cls)?.properties ?? []).map((p) => [p.name, innerOf(cls, p)]));
    byClass.set(cls, properties);
  }
  return properties;
}

/**
 * One "should not exist" error for each inherited name among the keys of a plain value bound for
 * `cls`, read before the framework strips or skips them: at the top, in nested objects of a
 * declared class (`card`, `clientInfo`), and among the keys of a map (`extras`). `metadata` keeps
 * its own rules. The value is not changed.
 */
export function inheritedNameErrors(value: unknown, cls: Class, path = ''): FieldError[] {
  if (!isRecord(value)) return [];
  const properties = propertiesOf(cls);
  const errors: FieldError[] = [];
  for (const key of Object.keys(value)) {
    const field = path ? `${path}.${key}` : key;
    const inner = properties.get(key);
    if (inner === undefined) {
      if (isInheritedName(key, cls)) errors.push({ field, message: 'should not exist' });
    } else if (inner === 'map') {
      const map = value[key];
      if (isRecord(map))
        for (const name of Object.keys(map))
          if (isInheritedName(name))
            errors.push({ field: `${field}.${name}`, message: 'should not exist' });
    } else if (inner !== 'skip') {
      errors.push(...inheritedNameErrors(value[key], inner, field));
    }
  }
  return errors;
}
