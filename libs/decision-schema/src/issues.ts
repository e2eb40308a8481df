export interface SchemaIssue {
  /** Dotted path into the schema, e.g. "questions.2.options.0.value"; "" for the root. */
  path: string;
  message: string;
}

export type Path = readonly (string | number)[];

/** Collects every issue of one validation run, so the author sees them all at once. */
export class Issues {
  readonly list: SchemaIssue[] = [];

  add(path: Path, message: string): void {
    this.list.push({ path: path.join('.'), message });
  }
}
