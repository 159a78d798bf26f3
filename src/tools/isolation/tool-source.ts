/** Where a tool class was loaded from, so a worker thread can load the same class again. */
export interface ToolSource {
  file: string;
  exportName: string;
}

const sources = new WeakMap<object, ToolSource>();

export function recordToolSource(toolClass: object, source: ToolSource): void {
  sources.set(toolClass, source);
}

/** The file and export a tool class came from; undefined for classes not loaded from a tool file. */
export function toolSourceOf(toolClass: object): ToolSource | undefined {
  return sources.get(toolClass);
}
