/**
 * Small valibot builders every schema module uses: bounded strings and integers, patterns, arrays.
 * @module
 */
import * as v from 'valibot';

/** The largest safe integer (2^53 - 1), the contract's version bound. */
export const MAX_SAFE = 9_007_199_254_740_991;

/** A string of `min`-`max` characters. */
export const str = (min: number, max: number) => v.pipe(v.string(), v.minLength(min), v.maxLength(max));
/** An integer in `min`-`max`. */
export const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
/** A string matching `re`, with a description for the published schema. */
export const pattern = (re: RegExp, description: string) => v.pipe(v.string(), v.regex(re), v.description(description));
/** A string of `min`-`max` characters matching `re`. */
export const boundedPattern = (min: number, max: number, re: RegExp, description: string) =>
  v.pipe(v.string(), v.minLength(min), v.maxLength(max), v.regex(re), v.description(description));
/** An array of at most `max` items. */
export const maxArray = <T extends v.GenericSchema>(item: T, max: number) => v.pipe(v.array(item), v.maxLength(max));
/** An array of `min`-`max` items. */
export const rangeArray = <T extends v.GenericSchema>(item: T, min: number, max: number) =>
  v.pipe(v.array(item), v.minLength(min), v.maxLength(max));

/** A list page `{ items, nextCursor }` (the shape every list operation answers). */
export function pageOf<T extends v.GenericSchema>(item: T, max: number) {
  return v.object({
    items: maxArray(item, max),
    nextCursor: v.pipe(v.nullable(v.string()), v.description('Send back unchanged as cursor for the next page; null on the last page.')),
  });
}
