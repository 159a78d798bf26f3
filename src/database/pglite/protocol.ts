/**
 * Wire-protocol translation between node-pg's query semantics and PGlite's protocol interface.
 *
 * PGlite's own `query()` drops the command tag (so `command` and node-pg's `rowCount` cannot be
 * known), the transaction status, and parses values with its own rules (int8 as number, NULL array
 * elements as the string 'NULL'). Speaking the protocol directly keeps all three exact: values are
 * encoded with node-pg's `prepareValue` and decoded with node-pg's `pg-types` parsers, so entities
 * read and write the same values on PGlite and on PostgreSQL.
 */
import { protocol, type messages } from '@electric-sql/pglite';
import { types } from 'pg';

// node-pg's own parameter encoder (Date, Buffer, arrays, objects); `pg/lib/utils` ships no typings.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue(value: unknown): string | Buffer | null };

const { serialize, Parser } = protocol;

/** What node-pg resolves a query with (the members TypeORM and our code read). */
export interface QueryResult {
  command: string | null;
  rowCount: number | null;
  rows: Record<string, unknown>[];
  fields: messages.Field[];
}

/** ReadyForQuery status: 'I' idle, 'T' inside a transaction block, 'E' inside a failed one. */
export type TransactionStatus = 'I' | 'T' | 'E';

export interface Exchange {
  /** node-pg's shape: one result, or an array when a simple query held several statements. */
  result: QueryResult | QueryResult[];
  error?: messages.DatabaseError;
  status: TransactionStatus;
}

/**
 * Encodes one round trip. Like node-pg: without parameters, the simple protocol (several
 * statements allowed); with parameters, Parse/Bind/Describe/Execute/Sync in one message batch.
 */
export function encodeQuery(text: string, values: readonly unknown[] = []): Uint8Array {
  if (values.length === 0) return serialize.query(text);
  return Buffer.concat([
    serialize.parse({ text }),
    serialize.bind({ values: values.map((value) => prepareValue(value)) }),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  ]);
}

/** Turns the backend messages of one round trip into node-pg results, the first error and the status. */
export function decodeResponse(data: Uint8Array): Exchange {
  const results: QueryResult[] = [];
  let current: QueryResult | undefined;
  let parsers: ((value: string) => unknown)[] = [];
  let error: messages.DatabaseError | undefined;
  // Without a ReadyForQuery the state is unknown: 'E' makes the session roll back before reuse.
  let status: TransactionStatus = 'E';

  new Parser().parse(data, (message) => {
    switch (message.name) {
      case 'rowDescription': {
        const { fields } = message as messages.RowDescriptionMessage;
        current = emptyResult(fields);
        parsers = fields.map((field) => types.getTypeParser(field.dataTypeID, 'text'));
        break;
      }
      case 'dataRow': {
        const values = (message as messages.DataRowMessage).fields;
        const target = (current ??= emptyResult([]));
        const row: Record<string, unknown> = {};
        values.forEach((value, i) => (row[target.fields[i].name] = value === null ? null : parsers[i](value)));
        target.rows.push(row);
        break;
      }
      case 'commandComplete': {
        const completed = current ?? emptyResult([]);
        applyCommandTag(completed, (message as messages.CommandCompleteMessage).text);
        results.push(completed);
        current = undefined;
        break;
      }
      case 'emptyQuery':
        results.push(emptyResult([]));
        break;
      case 'error':
        error ??= message as messages.DatabaseError;
        break;
      case 'readyForQuery':
        status = (message as messages.ReadyForQueryMessage).status as TransactionStatus;
        break;
    }
  });
  return { result: results.length === 1 ? results[0] : results, error, status };
}

function emptyResult(fields: messages.Field[]): QueryResult {
  return { command: null, rowCount: null, rows: [], fields };
}

/** node-pg's reading of a CommandComplete tag: "INSERT 0 3", "UPDATE 2", "SELECT 5", "CREATE TABLE". */
function applyCommandTag(result: QueryResult, tag: string): void {
  const match = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/.exec(tag);
  if (!match) return;
  result.command = match[1];
  const count = match[3] ?? match[2];
  if (count !== undefined) result.rowCount = parseInt(count, 10);
}
