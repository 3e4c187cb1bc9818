import { PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import type { RunRecord } from '../rl/records';
import { extractAdapter, readRunFile, recordsJsonl, SAMPLE_FORMATS, samplesAs, toJsonl, trainingSamples, type SampleFormat } from '../storage/index';
import { parseAnyRunConfig, promptTools, type AnyRunConfig } from '../runtime/run-config';
import { parse, positionals, UsageError } from './args';
import { openRunFile } from './files';
import type { CliIo } from './io';
import { metricsCsv, metricsJsonl, trlMetricRows } from './metrics-export';
import { FORCE_OPTION, notStdout, oneStdout, writeOutputFolder, writeText } from './output';

export const usage = `nextstate export RUN_FILE (--peft DIR | --samples FILE.jsonl [--format trl|slime|tinker] | --records FILE.jsonl | --metrics FILE.csv|FILE.jsonl) [--force]
  --samples: one training sample a line; --format trl (default) writes rows nextstate train reads,
  slime its Sample (Sample.from_dict), tinker its Datum (openclaw-tinker/data_formatter.py)
  --metrics writes one row per step under the names TRL's trainers log (train/loss, train/kl,
  train/clip_ratio/low_mean, ..., eval/NAME); CSV for a .csv name, JSON lines otherwise.
  --samples -, --records - or --metrics - writes the lines to stdout; --force replaces files that are there`;

export async function exportCommand(argv: string[], io: CliIo): Promise<void> {
  const options = {
    peft: { type: 'string' as const },
    samples: { type: 'string' as const },
    format: { type: 'string' as const },
    records: { type: 'string' as const },
    metrics: { type: 'string' as const },
    ...FORCE_OPTION,
  };
  const v = parse(argv, options);
  const [file] = positionals(argv, options);
  if (!file) throw new UsageError('name the run file to export from');
  if (!v.peft && !v.samples && !v.records && !v.metrics) {
    throw new UsageError('choose --peft DIR, --samples FILE.jsonl, --records FILE.jsonl or --metrics FILE.csv|FILE.jsonl');
  }
  oneStdout({ samples: v.samples, records: v.records, metrics: v.metrics });
  if (v.format !== undefined && v.samples === undefined) throw new UsageError('--format shapes the --samples lines; add --samples FILE.jsonl');
  const format = (v.format ?? 'trl') as SampleFormat;
  if (!SAMPLE_FORMATS.includes(format)) throw new UsageError(`--format must be ${SAMPLE_FORMATS.join(', ')}, got ${JSON.stringify(v.format)}`);
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
  if (typeof v.samples === 'string' || typeof v.records === 'string' || typeof v.metrics === 'string') {
    const records: RunRecord[] = [];
    let config: AnyRunConfig | undefined;
    for await (const item of readRunFile(await openRunFile(file))) {
      if (item.kind === 'header') config = parseAnyRunConfig(item.header.run.config);
      if (item.kind === 'record') records.push(item.record);
    }
    const tools = config ? promptTools(config) : undefined;
    if (typeof v.samples === 'string') {
      const { rows } = trainingSamples(records, { tools });
      io.note(
        `${rows.length} training samples (${format}) written to ${writeText(v.samples, toJsonl(samplesAs(rows, format)), io, { option: 'samples', force })}`,
      );
    }
    if (typeof v.records === 'string') {
      io.note(`${records.length} records written to ${writeText(v.records, recordsJsonl(records), io, { option: 'records', force })}`);
    }
    if (typeof v.metrics === 'string') {
      const rows = trlMetricRows(records, { learningRate: config?.preset.optimizer.lr });
      const text = /\.csv$/i.test(v.metrics) ? metricsCsv(rows) : metricsJsonl(rows);
      io.note(`${rows.length} steps of metrics written to ${writeText(v.metrics, text, io, { option: 'metrics', force })}`);
    }
  }
}
