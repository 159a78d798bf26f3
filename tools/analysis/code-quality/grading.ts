/** What code-quality reads and how it grades: the definition states them, so they live apart from the parsers. */
export const MAX_SOURCE_FILES = 2_000;
export const MAX_SOURCE_BYTES = 1024 * 1024;

export const GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
export type Grade = (typeof GRADES)[number];
/** Lowest maintainability index of each grade but F. */
export const GRADE_FLOORS: ReadonlyArray<[Grade, number]> = [['A', 65], ['B', 50], ['C', 35], ['D', 20]];
/** A function past either bound costs its file one grade (Sonar's and ESLint's usual limits). */
export const COGNITIVE_LIMIT = 15;
export const CYCLOMATIC_LIMIT = 20;
/** Duplicated lines past this share of the code cost one grade. */
export const DUPLICATION_LIMIT = 10;
