/** `tos advisories sync`: a client-side command working on a local directory (no service, no database). */
import { Command } from 'commander';
import { EXIT } from '../client/api-client';
import { examples } from '../client/help';
import { addOutputOptions, emit, type OutputOptions, type View } from '../client/output';

const DEFAULT_SOURCE = 'https://osv-vulnerabilities.storage.googleapis.com';
/** The ecosystems dependency-check (npm, PyPI, Go) and image-scan (also Debian, Alpine) query. */
const DEFAULT_ECOSYSTEMS = ['npm', 'PyPI', 'Go', 'Debian', 'Alpine'];

type Row = Record<string, unknown>;

const SYNC_VIEW: View = {
  columns: [
    { header: 'ecosystem', value: (row: Row) => row.ecosystem },
    { header: 'status', value: (row: Row) => row.status },
    { header: 'records', value: (row: Row) => row.records },
    { header: 'data as of', value: (row: Row) => row.data_as_of },
    { header: 'error', value: (row: Row) => row.error, flexible: true },
  ],
  fields: ['ecosystem', 'status', 'records', 'data_as_of', 'synced_at', 'error'],
};

interface SyncCommandOptions extends OutputOptions {
  dir: string;
  ecosystems: string;
  source: string;
}

export function registerAdvisoryCommands(program: Command): void {
  const advisories = program.command('advisories').description('offline OSV advisory data for dependency-check and image-scan (OSV_DATA_DIR)');
  examples(
    addOutputOptions(
      advisories
        .command('sync')
        .description("download OSV's exports per ecosystem into a directory to point OSV_DATA_DIR at (resumable; unchanged exports are skipped)")
        .requiredOption('--dir <directory>', 'the OSV_DATA_DIR to fill (<dir>/<Ecosystem>/<ID>.json, state in <dir>/.osv-sync.json)')
        .option('--ecosystems <list>', 'comma-separated OSV ecosystems', DEFAULT_ECOSYSTEMS.join(','))
        .option('--source <url>', "base URL of OSV's exports (<url>/<Ecosystem>/all.zip), e.g. an internal mirror", DEFAULT_SOURCE),
      SYNC_VIEW,
    ),
    ['tos advisories sync --dir /srv/osv', 'tos advisories sync --dir /srv/osv --ecosystems Debian,Alpine --json'],
  ).action(async (o: SyncCommandOptions) => {
    // Loaded here: the help and other commands never read the unpacking code.
    const { syncAdvisories } = await import('./sync');
    const ecosystems = o.ecosystems.split(',').map((name) => name.trim()).filter((name) => name !== '');
    const outcomes = await syncAdvisories({ directory: o.dir, ecosystems, source: o.source });
    await emit(outcomes, SYNC_VIEW, o);
    process.exitCode = outcomes.some((outcome) => outcome.status === 'failed') ? EXIT.error : EXIT.ok;
  });
}
