#!/usr/bin/env node
/** The `seclookup` executable (dist/cli.js): runs `main` with the process's own stdio, environment and folder. */
// First: evaluated before main's imports, so serve's stop signals are caught while the rest loads.
import './serve-signals.js';
import { EXIT_FAILURE } from './errors.js';
import { main } from './main.js';
import { writeErrorReported } from './output.js';

// `seclookup keys list | head` closes stdout early: not a failure, the rest is dropped. Any other
// failed write (a full disk, a closed terminal) fails the command with one line instead of a
// stack trace: `keys create --json > keys.json` on a full disk must not exit 0.
// A command that waited for its output (keys create, whose secret is shown once) says the
// failure itself, with what it did about it; it is then not said twice.
let outputFailed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE' || outputFailed) return;
  outputFailed = true;
  if (!writeErrorReported(error)) process.stderr.write(`seclookup: cannot write the output: ${error.message}\n`);
  process.exitCode = EXIT_FAILURE;
});

// stderr carries the operator's messages: when its terminal is gone (EIO after a hangup) or
// its file is on a full disk, they are lost, but the command goes on (serve drains and exits).
process.stderr.on('error', () => {});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = outputFailed ? EXIT_FAILURE : code;
});
