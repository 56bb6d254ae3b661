// How the project's tsx commands end: the status their main answers, or 1 with the error's message on one line.
export function runCommand(main: () => Promise<number>): void {
  main().then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
