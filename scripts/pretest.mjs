#!/usr/bin/env node
/**
 * `npm test`'s first step: build dist/ with its type declarations (the tests run the built CLI
 * and package), type-check everything (`tsc --noEmit`) and lint (`npm run lint`), side by side.
 * One after another they took about 55 s on a 2-core machine, most of it the declarations' and
 * the type-check's two TypeScript programs, each on one core. None of them reads what another
 * writes: tsc's program and the linter leave dist/ out.
 *
 * Each step's output is printed when it ends, in one piece; the exit code is 1 when any step
 * failed, and the steps that failed are named last.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const STEPS = [
  { name: 'build (tsup, with declarations)', command: [process.execPath, 'scripts/build.mjs', '--dts'] },
  { name: 'type-check (tsc --noEmit)', command: [process.execPath, 'node_modules/typescript/bin/tsc', '--noEmit'] },
  { name: 'lint (npm run lint)', command: ['npm', 'run', '--silent', 'lint'] },
];

/** Run one step to its end: its exit code and everything it printed, interleaved as it came. */
function run({ command }) {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => resolve({ code: 1, output: Buffer.from(`${error.message}\n`) }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(output) }));
  });
}

/**
 * Run `steps` side by side, writing each one's output to `out` as it ends; resolves with the
 * names of the steps that failed (empty when all passed).
 */
export async function runSteps(steps, out = process.stdout) {
  const started = Date.now();
  const failed = [];
  await Promise.all(
    steps.map(async (step) => {
      const { code, output } = await run(step);
      out.write(`> ${step.name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} after ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      if (output.length > 0) out.write(output);
      if (code !== 0) failed.push(step.name);
    }),
  );
  return failed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const failed = await runSteps(STEPS);
  if (failed.length > 0) {
    process.stderr.write(`pretest failed: ${failed.join('; ')}\n`);
    process.exit(1);
  }
}
