<?php
// The TAP reporting both Symfony files share: `check` runs a case and prints its line,
// `expect` fails it, `finish` prints the plan and the count line scripts/frameworks.sh reads
// and exits non-zero if any case failed.

$failures = 0;
$case = 0;
function check(string $name, callable $body): void
{
    global $failures, $case;
    $case++;
    $started = microtime(true);
    try {
        $body();
        printf("ok %d - %s (%.1f s)\n", $case, $name, microtime(true) - $started);
    } catch (\Throwable $e) {
        $failures++;
        printf("not ok %d - %s\n#   %s\n", $case, $name, str_replace("\n", "\n#   ", (string) $e));
    }
}

function expect(bool $condition, string $what): void
{
    if (!$condition) {
        throw new \RuntimeException("expected: $what");
    }
}

function finish(): void
{
    global $failures, $case;
    printf("1..%d\n# %d passed, %d failed\n", $case, $case - $failures, $failures);
    exit($failures === 0 ? 0 : 1);
}
