/**
 * Where a long step reports. `line` is a lasting message; `status` says how far the step is and
 * replaces the previous status: on a terminal it is one line rewritten in place (\r), elsewhere (CI
 * logs, a pipe) a plain line now and then, so a log is neither silent for minutes nor flooded.
 */
export interface Progress {
  line(text: string): void;
  status(text: string): void;
  /** Ends the status line (on a terminal, moves past it). */
  done(): void;
}

export interface ProgressOptions {
  /** Lines are prefixed with this, e.g. "[testenv] ". */
  prefix?: string;
  /** On a non-terminal, at most one status line per this many ms (the first is always written). */
  plainEveryMs?: number;
  now?: () => number;
}

export function progressOn(
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number },
  opts: ProgressOptions = {},
): Progress {
  const prefix = opts.prefix ?? "";
  const now = opts.now ?? Date.now;
  if (stream.isTTY) {
    let shown = false;
    const clear = () => {
      if (shown) stream.write("\r\x1b[K");
      shown = false;
    };
    return {
      line(text) {
        clear();
        stream.write(`${prefix}${text}\n`);
      },
      status(text) {
        // Longer than the terminal, the line would wrap and \r could no longer rewrite it.
        // A terminal of unknown size (columns 0, e.g. under `script`) gets a generous default.
        const columns = stream.columns !== undefined && stream.columns > 0 ? stream.columns : 100;
        const width = Math.max(20, columns - 1);
        const shownText = `${prefix}${text}`.slice(0, width);
        stream.write(`\r\x1b[K${shownText}`);
        shown = true;
      },
      done() {
        if (shown) stream.write("\n");
        shown = false;
      },
    };
  }
  const every = opts.plainEveryMs ?? 15_000;
  let last: number | undefined;
  let lastStep: string | undefined;
  return {
    line(text) {
      stream.write(`${prefix}${text}\n`);
    },
    status(text) {
      // A new step ("go: downloading" after "go build: compiling") is worth a line at once.
      const step = text.split(",")[0];
      const t = now();
      if (last !== undefined && t - last < every && step === lastStep) return;
      last = t;
      lastStep = step;
      stream.write(`${prefix}${text}\n`);
    },
    done() {
      last = undefined;
      lastStep = undefined;
    },
  };
}

/** A Progress for callers that only take lines: statuses become a throttled line. */
export function progressFromLines(
  log: (line: string) => void,
  opts: Omit<ProgressOptions, "prefix"> = {},
): Progress {
  const sink = {
    write: (chunk: string) => {
      log(chunk.replace(/\n$/, ""));
      return true;
    },
  };
  return progressOn(sink as unknown as NodeJS.WritableStream, opts);
}
