"""Unit tests of cli.py, the options of loadtests/run.sh: the older spellings, the rules on which options go
together, the help generated from the parser, and run.sh's own use of it."""
import contextlib
import io
import re
import subprocess
import unittest

from cli import ENVIRONMENT, ROOT, VARIABLES, build, parse

RUN_SH = (ROOT / "loadtests" / "run.sh").read_text()
BASH = RUN_SH + "".join(p.read_text() for p in sorted((ROOT / "loadtests" / "lib").glob("*.sh"))) + \
    (ROOT / "scripts" / "services.sh").read_text()


def changed(argv):
    """The variables argv sets to other than their defaults (SLO_MODE left out: it is derived)."""
    values = parse(argv)
    return {name: value for name, value in values.items() if value != VARIABLES[name] and name != "SLO_MODE"}


def failure(argv):
    """parse's exit status and what it printed on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parse(argv)
        except SystemExit as exit:
            return exit.code, err.getvalue()
    return 0, err.getvalue()


def bash_parse(*argv):
    """run.sh's own lines up to the eval of cli.py's assignments, then the variables it set."""
    prologue = RUN_SH[:RUN_SH.index('eval "$settings"\n') + len('eval "$settings"\n')]
    prologue = re.sub(r"^ROOT=.*$", f"ROOT={ROOT}", prologue, count=1, flags=re.M)
    script = prologue + "".join(f'printf "%s=%s\\n" {name} "${name}"\n' for name in VARIABLES)
    return subprocess.run(["bash", "-c", script, "run.sh", *argv], capture_output=True, text=True)


class LegacySpellingTests(unittest.TestCase):
    """The flags scripts/test.sh, scripts/e2e.sh, selftest.sh, .ci/ and the docs use mean what they meant."""

    def test_the_old_spellings_set_what_the_subcommands_set(self):
        pairs = [
            ([], ["run"]),
            (["--smoke"], ["run", "--smoke"]),
            (["--smoke", "--ceiling"], ["ceiling", "--smoke"]),
            (["--scenario", "vus-1000", "--ceiling", "--duration", "30s"],
             ["ceiling", "--scenario", "vus-1000", "--duration", "30s"]),
            (["--freshness", "--sql-writer", "--fault", "redis-clients,reader-kill", "--smoke"],
             ["freshness", "--sql-writer", "--fault", "redis-clients,reader-kill", "--smoke"]),
            (["--freshness", "--redis", "cluster", "--fault", "primary-kill"],
             ["freshness", "--redis", "cluster", "--fault", "primary-kill"]),
            (["--db", "mysql"], ["run", "--db", "mysql"]),
            (["--duration", "2m", "--db-outage", "15s@10s"], ["db-outage", "15s@10s", "--duration", "2m"]),
            (["--db-outage=15s@10s"], ["db-outage", "15s@10s"]),
            (["--compare", "--concerts", "1500000"], ["compare", "--concerts", "1500000"]),
            (["--capture-compare", "--duration", "30s"], ["capture-compare", "--duration", "30s"]),
            (["--instances", "3", "--writes", "5"], ["fleet", "--instances", "3", "--writes", "5"]),
            (["--instances", "2", "--redis", "cluster", "--fault", "primary-kill", "--duration", "20s"],
             ["fleet", "--instances", "2", "--redis", "cluster", "--fault", "primary-kill", "--duration", "20s"]),
            (["--instances", "3", "--topology-compare", "--writes", "5"],
             ["topology-compare", "--instances", "3", "--writes", "5"]),
            (["--instances", "4", "--join"], ["fleet", "--instances", "4", "--join"]),
            (["--standin", "--smoke", "--concerts", "1000", "--scenario", "vus-1000", "--ceiling"],
             ["ceiling", "--standin", "--smoke", "--concerts", "1000", "--scenario", "vus-1000"]),
        ]
        for old, new in pairs:
            with self.subTest(old=old):
                self.assertEqual(parse(old), parse(new))

    def test_the_old_spellings_set_the_variables_the_old_loop_set(self):
        self.assertEqual(changed(["--smoke", "--ceiling"]), {"SMOKE": "true", "CEILING": "true"})
        self.assertEqual(changed(["--freshness", "--sql-writer", "--fault", "redis-clients,capture-stall", "--smoke"]),
                         {"FRESHNESS": "true", "SQL_WRITER": "true", "FAULT": "redis-clients,capture-stall",
                          "SMOKE": "true"})
        self.assertEqual(changed(["--db", "mysql"]), {"DB": "mysql"})
        self.assertEqual(changed(["--db-outage", "15s@10s"]), {"DB_OUTAGE": "15s@10s"})
        self.assertEqual(changed(["--redis", "cluster"]), {"REDIS_MODE": "cluster", "INSTANCES": "1"})
        self.assertEqual(changed(["--topology-compare"]), {"TOPOLOGY_COMPARE": "true", "INSTANCES": "3"})
        self.assertEqual(changed(["--ceiling", "--warm-rounds", "2", "--profile", "redis-only", "--jdk25",
                                  "--aot-cache", "--keep-running", "--rate", "500"]),
                         {"CEILING": "true", "WARM_ROUNDS": "2", "PROFILE": "redis-only", "JDK25": "true",
                          "AOT_CACHE": "true", "KEEP_RUNNING": "true", "RATE": "500"})

    def test_a_mode_flag_where_a_value_belongs_is_no_mode(self):
        code, err = failure(["--duration", "--ceiling"])
        self.assertEqual(code, 2)
        self.assertIn("argument --duration: expected one argument", err)


class SloModeTests(unittest.TestCase):
    def test_the_floor_is_the_slo_of_a_single_read_run_that_is_not_a_smoke_one(self):
        self.assertEqual(parse([])["SLO_MODE"], "floor")
        self.assertEqual(parse(["--smoke"])["SLO_MODE"], "absolute")
        self.assertEqual(parse(["--scenario", "read-write-mix"])["SLO_MODE"], "absolute")
        self.assertEqual(parse(["--slo", "absolute"])["SLO_MODE"], "absolute")
        self.assertEqual(parse(["--smoke", "--slo", "floor"])["SLO_MODE"], "floor")
        for argv in (["--compare"], ["--capture-compare"], ["--freshness"], ["--instances", "2"],
                     ["--db-outage", "1s@1s"], ["--topology-compare"]):
            with self.subTest(argv=argv):
                self.assertEqual(parse(argv)["SLO_MODE"], "absolute")


class InvalidCombinationTests(unittest.TestCase):
    def test_options_that_do_not_go_together_exit_2_naming_the_option(self):
        cases = [
            (["--ceiling", "--compare"], "--compare"),
            (["--freshness", "--db-outage", "1s@2s"], "--db-outage"),
            (["--db-outage", "1s@2s", "--standin"], "--standin"),
            (["--db-outage", "1s@2s", "--compare"], "--compare"),
            (["--capture-compare", "--profile", "none"], "--profile"),
            (["--capture-compare", "--freshness"], "--freshness"),
            (["--warm-rounds", "2"], "--warm-rounds"),
            (["--sql-writer"], "--sql-writer"),
            (["--fault", "redis-clients"], "--fault"),
            (["--instances", "2", "--fault", "redis-clients"], "--fault"),
            (["--instances", "2", "--fault", "primary-kill"], "--fault"),
            (["--redis", "cluster", "--fault", "primary-kill", "--scenario", "vus-1000"], "--fault"),
            (["--freshness", "--fault", "primary-kill"], "--fault"),
            (["--freshness", "--redis", "cluster", "--fault", "redis-restart"], "--fault"),
            (["--freshness", "--redis", "cluster", "--fault", "primary-kill,redis-clients"], "--fault"),
            (["--freshness", "--fault", "nope"], "--fault"),
            (["--freshness", "--instances", "2"], "--instances"),
            (["--freshness", "--standin"], "--standin"),
            (["--freshness", "--duration", "1h"], "--duration"),
            (["--topology-compare", "--redis", "cluster"], "--redis"),
            (["--topology-compare", "--fault", "primary-kill"], "--fault"),
            (["--instances", "2", "--ceiling"], "--instances"),
            (["--join"], "--join"),
            (["--instances", "1", "--join"], "--join"),
            (["--instances", "100"], "--instances"),
            (["--redis", "sentinel"], "--redis"),
            (["--concerts", "0"], "--concerts"),
            (["--rate", "1.5"], "--rate"),
            (["--ceiling", "--warm-rounds", "0"], "--warm-rounds"),
            (["--profile", "Cache"], "--profile"),
            (["--slo", "tight"], "--slo"),
            (["--slo", "floor", "--scenario", "read-write-mix"], "--slo"),
            (["--ceiling", "--slo", "floor"], "--slo"),
            (["--scenario", "nope"], "--scenario"),
            (["--writes", "2", "--scenario", "vus-1000"], "--writes"),
            (["--db", "postgres"], "--db"),
            (["--db-outage", "15s"], "D@T"),
            (["--db-outage"], "--db-outage"),
            (["--comp"], "--comp"),
            (["run", "--ceiling"], "--ceiling"),
            (["ceiling", "--compare"], "--compare"),
        ]
        for argv, option in cases:
            with self.subTest(argv=argv):
                code, err = failure(argv)
                self.assertEqual(code, 2, err)
                self.assertIn(option, err.splitlines()[-1])


class GeneratedHelpTests(unittest.TestCase):
    def setUp(self):
        self.parser, self.commands = build()

    def test_every_variable_the_options_set_has_an_option_or_a_subcommand_in_the_help(self):
        helps = {name: command.format_help() for name, command in self.commands.items()}
        for variable in VARIABLES:
            with self.subTest(variable=variable):
                options = [option for command in self.commands.values() for action in command._actions
                           if action.dest == variable for option in (action.option_strings or [action.metavar])]
                modes = [name for name, command in self.commands.items() if command.get_default(variable)]
                self.assertTrue(options or modes or variable == "SLO_MODE")
                for option in options:
                    self.assertTrue(any(option in help for help in helps.values()), option)
                for mode in modes:
                    self.assertIn(mode, self.parser.format_help())

    def test_every_variable_the_options_set_is_read_by_the_runner(self):
        for variable in VARIABLES:
            with self.subTest(variable=variable):
                self.assertRegex(BASH, r"\$\{?" + variable + r"\b")

    def test_the_runner_parses_no_option_itself(self):
        self.assertNotIn("case $1 in", RUN_SH)
        self.assertNotIn("usage()", RUN_SH)
        self.assertNotRegex(RUN_SH, r"\n *--[a-z-]+\) ")

    def test_the_environment_the_help_lists_is_the_runners_with_its_defaults(self):
        help = self.parser.format_help()
        for name, default, _, where in ENVIRONMENT:
            with self.subTest(name=name):
                self.assertIn(name, help)
                read = re.findall(r"\$\{" + name + r":-([^}$]*)\}", BASH)
                self.assertTrue(read or re.search(r"\$\{?" + name + r"\b", BASH), f"{name} is not read")
                literal = {value for value in read if value}
                self.assertEqual(literal, {default} if default else set())
                for command in where or ():
                    self.assertIn(name, self.commands[command].format_help())

    def test_the_readme_names_every_subcommand(self):
        readme = (ROOT / "loadtests" / "README.md").read_text()
        options = readme[readme.index("## Runner options"):readme.index("## Reading the table")]
        for name in self.commands:
            with self.subTest(name=name):
                self.assertIn(f"`{name}`", options)

    def test_help_exits_0_for_the_runner_and_every_subcommand(self):
        for argv in (["--help"], ["-h"], ["--smoke", "--ceiling", "-h"], *([name, "--help"] for name in self.commands)):
            with self.subTest(argv=argv):
                out = io.StringIO()
                with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as exit:
                    parse(argv)
                self.assertEqual(exit.exception.code, 0)
                self.assertIn("usage: loadtests/run.sh", out.getvalue())


class RunShTests(unittest.TestCase):
    """run.sh's own lines up to the eval: nothing here starts a service."""

    def test_run_sh_evals_the_assignments_with_values_as_given(self):
        done = bash_parse("--smoke", "--duration", "30s'; echo x $(id) \"", "--ceiling")
        self.assertEqual(done.returncode, 0, done.stderr)
        values = dict(line.split("=", 1) for line in done.stdout.splitlines())
        self.assertEqual(values, {**parse(["ceiling", "--smoke", "--duration", "30s'; echo x $(id) \""])})

    def test_run_sh_prints_the_help_and_exits_0_setting_nothing(self):
        done = bash_parse("--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("subcommands:", done.stdout)
        self.assertNotIn("SCENARIO=", done.stdout)

    def test_run_sh_exits_2_on_an_error_setting_nothing(self):
        done = bash_parse("--ceiling", "--compare")
        self.assertEqual(done.returncode, 2)
        self.assertIn("argument --compare: not allowed with argument --ceiling", done.stderr)
        self.assertEqual(done.stdout, "")


if __name__ == "__main__":
    unittest.main()
