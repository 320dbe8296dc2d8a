// The parts of the API's answers the page reads (the report's full schema is in
// /v1/openapi.json; these are its fields as the page uses them).

export interface Violation {
  rule: string;
  line: number;
  col: number;
  text: string;
  message: string;
  hint: string;
}

/** What a table artifact (CSV, xlsx) holds, read by the server: its shape, each column's
 *  kind, its first rows (cells as text, long ones already cut). The file's data: shown as
 *  text, never as markup. */
export interface TablePreview {
  /** The sheet previewed (workbooks: the first). */
  sheet?: string;
  /** Every sheet of the workbook, in order. */
  sheets?: string[];
  /** Data rows, the header not counted. */
  rows: number;
  /** Every column (more than `columns` lists when the table is wide). */
  column_count: number;
  columns: { name: string; kind: string }[];
  /** The first rows, each cell as text. */
  head: string[][];
}

export interface ArtifactReport {
  name: string;
  media_type: string;
  bytes: number;
  sha256: string;
  data_base64?: string;
  table?: TablePreview;
}

export interface Timings {
  queue: number;
  gate: number;
  stage: number;
  exec: number;
  describe: number;
  validate: number;
  total: number;
}

export interface ErrorReport {
  kind: string;
  message: string;
  type_name?: string | null;
  line?: number | null;
  traceback?: string | null;
  hint?: string | null;
  /** invalid_output: the check that failed (`missing`, `blank`, `table:<artifact>`, ...). */
  check?: string | null;
}

/** A report; a run's fields (artifacts, stdout, timings, ...) are at its top level. */
export interface Report {
  status: string;
  kind: string;
  feedback: string;
  /** What the saved figures show, in words (the figure summary). */
  description?: string | null;
  violations: Violation[];
  error?: ErrorReport | null;
  artifacts?: ArtifactReport[];
  stdout?: string;
  stdout_dropped?: number;
  stderr?: string;
  seed?: number | null;
  timings_ms?: Timings | null;
  record?: string | null;
}

export interface RunSummary {
  name: string;
  created_unix_ms: number;
  task?: string | null;
  status: string;
  statuses: string[];
  artifacts: number;
}

export interface RunList {
  runs: RunSummary[];
  unreadable: number;
}

export interface ArtifactRecord {
  name: string;
  media_type: string;
  bytes: number;
  sha256: string;
}

export interface AttemptRecord {
  code: string;
  status: string;
  outcome: Report;
  artifacts: ArtifactRecord[];
}

export interface RunRecord {
  id: string;
  created_unix_ms: number;
  task?: string | null;
  timeout_ms: number;
  memory_bytes: number;
  /** Ids of the job's checks over its artifacts; a table check is `table:<artifact>`. */
  validators?: string[];
  inputs: { name: string; bytes: number; sha256: string }[];
  attempts: AttemptRecord[];
}

export interface ReplayAnswer {
  identical: boolean;
  attempts: {
    status: string;
    recorded_status: string;
    artifacts: { name: string; recorded_sha256?: string | null; verdict: string }[];
  }[];
}

export interface Quantiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

export interface WorkerStats {
  slot: number;
  pid: number;
  birth: string;
  jobs_served: number;
  busy: boolean;
  memory?: { rss_bytes: number; pss_bytes: number; private_bytes: number } | null;
}

export interface PoolView {
  ready: boolean;
  draining: boolean;
  stats: {
    workers: WorkerStats[];
    busy: number;
    queued: number;
    unanswered: number;
    queue_depth: number;
    min_workers: number;
    max_workers: number;
    forked: number;
    cold_fallbacks: number;
    retired: Record<string, number>;
    host_pressure: boolean;
    zygote?: { pid?: number | null; restarts: number; last_error?: string | null } | null;
  } | null;
  recent_replacements: { at_unix_ms: number; kind: string; cause: string; detail: string; slot: number; pid: number }[];
  latency_ms: Record<string, Quantiles>;
}
