import { PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import type { RunRecord } from '../rl/records';
import { extractAdapter, readRunFile, recordsJsonl, toJsonl, trainingSamples } from '../storage/index';
import { parseAnyRunConfig, promptTools } from '../runtime/run-config';
import { parse, positionals, UsageError } from './args';
import { openRunFile } from './files';
import type { CliIo } from './io';
import { FORCE_OPTION, notStdout, oneStdout, writeOutputFolder, writeText } from './output';

export const usage = `nextstate export RUN_FILE (--peft DIR | --samples FILE.jsonl | --records FILE.jsonl) [--force]
  --samples - or --records - writes the lines to stdout; --force replaces files that are there`;

export async function exportCommand(argv: string[], io: CliIo): Promise<void> {
  const options = { peft: { type: 'string' as const }, samples: { type: 'string' as const }, records: { type: 'string' as const }, ...FORCE_OPTION };
  const v = parse(argv, options);
  const [file] = positionals(argv, options);
  if (!file) throw new UsageError('name the run file to export from');
  if (!v.peft && !v.samples && !v.records) throw new UsageError('choose --peft DIR, --samples FILE.jsonl or --records FILE.jsonl');
  oneStdout({ samples: v.samples, records: v.records });
  const force = v.force === true;
  if (typeof v.peft === 'string') {
    notStdout(v.peft, 'peft', 'a folder (two files)');
    const adapter = await extractAdapter(await openRunFile(file));
    writeOutputFolder(
      v.peft,
      [
        [PEFT_WEIGHTS, adapter.files[PEFT_WEIGHTS]],
        [PEFT_CONFIG, adapter.files[PEFT_CONFIG]],
      ],
      { option: 'peft', force },
    );
    io.note(`adapter of version ${adapter.version} written to ${v.peft}`);
  }
  if (typeof v.samples === 'string' || typeof v.records === 'string') {
    const records: RunRecord[] = [];
    let tools: readonly object[] | undefined;
    for await (const item of readRunFile(await openRunFile(file))) {
      if (item.kind === 'header') tools = promptTools(parseAnyRunConfig(item.header.run.config));
      if (item.kind === 'record') records.push(item.record);
    }
    if (typeof v.samples === 'string') {
      const { rows } = trainingSamples(records, { tools });
      io.note(`${rows.length} training samples written to ${writeText(v.samples, toJsonl(rows), io, { option: 'samples', force })}`);
    }
    if (typeof v.records === 'string') {
      io.note(`${records.length} records written to ${writeText(v.records, recordsJsonl(records), io, { option: 'records', force })}`);
    }
  }
}
