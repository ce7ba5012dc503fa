package dev.idempotency.model;

import edu.mit.csail.sdg.alloy4.A4Reporter;
import edu.mit.csail.sdg.ast.Command;
import edu.mit.csail.sdg.parser.CompModule;
import edu.mit.csail.sdg.parser.CompUtil;
import edu.mit.csail.sdg.translator.A4Options;
import edu.mit.csail.sdg.translator.A4Solution;
import edu.mit.csail.sdg.translator.TranslateAlloyToKodkod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import kodkod.engine.satlab.SATFactory;

/**
 * Runs the commands of the protocol's Alloy model (under {@code src/main/alloy}) through Alloy's
 * API, with SAT4J, the solver in pure Java that the Alloy distribution bundles.
 */
final class ModelChecker {

    /**
     * What one command found.
     *
     * @param file the model file, relative to the model's folder
     * @param label the command's name
     * @param command the command as Alloy prints it (its scopes)
     * @param instance whether the solver found an instance: for a check, a counterexample
     * @param millis how long translation and solving took
     * @param primaryVars the primary variables of the last SAT problem
     * @param totalVars all variables of the last SAT problem
     * @param clauses the clauses of the last SAT problem
     * @param solution the solution, to print a counterexample's trace
     * @param world the parsed model, to evaluate expressions in the solution
     */
    record Result(String file, String label, String command, boolean instance, long millis, int primaryVars, int totalVars,
                  int clauses, A4Solution solution, CompModule world) {
        @Override
        public String toString() {
            return file + " " + label + " [" + command + "]: " + (instance ? "instance found" : "no instance") + " in " + millis
                    + " ms, " + primaryVars + " primary vars, " + totalVars + " vars, " + clauses + " clauses";
        }
    }

    private ModelChecker() {
    }

    /** @return the folder of the model's files: set by the build, or found from the working directory */
    static Path modelDir() {
        String dir = System.getProperty("idempotency.model.dir");
        if (dir != null) {
            return Paths.get(dir);
        }
        Path here = Paths.get("").toAbsolutePath();
        Path module = Files.isDirectory(here.resolve("src/main/alloy")) ? here : here.resolve("idempotency-model");
        return module.resolve("src/main/alloy");
    }

    /** @return whether the deep setting was asked for ({@code -Didempotency.model.deep=true}) */
    static boolean deep() {
        return Boolean.getBoolean("idempotency.model.deep");
    }

    /** @return the names of the commands of {@code file} */
    static List<String> commands(String file) {
        return parse(file).getAllCommands().stream().map(c -> c.label).collect(Collectors.toList());
    }

    /**
     * Runs the command {@code label} of {@code file}.
     *
     * @param file the model file, relative to {@link #modelDir()}
     * @param label the command's name
     * @return what it found
     */
    static Result run(String file, String label) {
        CompModule world = parse(file);
        Command command = world.getAllCommands().stream().filter(c -> c.label.equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no command " + label + " in " + file));
        int[] last = new int[3];
        A4Reporter reporter = new A4Reporter() {
            @Override
            public void solve(int step, int primaryVars, int totalVars, int clauses) {
                last[0] = primaryVars;
                last[1] = totalVars;
                last[2] = clauses;
            }
        };
        A4Options options = new A4Options();
        options.solver = SATFactory.get("sat4j");
        options.skolemDepth = 1;
        long start = System.nanoTime();
        A4Solution solution = TranslateAlloyToKodkod.execute_command(reporter, world.getAllReachableSigs(), command, options);
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new Result(file, label, command.toString(), solution.satisfiable(), millis, last[0], last[1], last[2], solution, world);
    }

    /** The steps of the model, named as in protocol.als, and the expression that finds who took each. */
    private static final String[][] EVENTS = {
        {"claimNew", "{a: Attempt | claimNew[a]}"}, {"takeOver", "{a: Attempt | takeOver[a]}"},
        {"replay", "{a: Attempt | replay[a]}"}, {"resume", "{a: Attempt | resume[a]}"}, {"giveUp", "{a: Attempt | giveUp[a]}"},
        {"runOnHeld", "{a: Attempt | runOnHeld[a]}"}, {"call", "{a: Attempt | call[a]}"}, {"extend", "{a: Attempt | extend[a]}"},
        {"fail", "{a: Attempt | fail[a]}"}, {"record", "{a: Attempt, s: RecordStatus | record[a, s]}"},
        {"lose", "{a: Attempt | lose[a]}"}, {"stop", "{a: Attempt | stop[a]}"}, {"leaseEnds", "{a: Attempt | leaseEnds[a]}"},
        {"delist", "{k: Key | delist[k]}"}, {"expires", "{k: Key | expires[k]}"}, {"purge", "{k: Key | purge[k]}"},
    };

    /** What each state shows: the store's record of each key, its lease and entry, and each attempt. */
    private static final String[][] STATE = {
        {"status", "status"}, {"owner", "owner"}, {"point", "point"}, {"result", "result"}, {"attempts", "claimedBy"},
        {"pending", "Store.pending"}, {"expired", "Store.expired"}, {"leased", "Store.leased"}, {"pc", "pc"}, {"answer", "answer"},
    };

    /**
     * Writes an instance's trace as text: each state, then the step taken from it.
     *
     * @param result a command's result with an instance
     * @return the trace, one line per state and one per step
     */
    static String trace(Result result) {
        A4Solution solution = result.solution();
        StringBuilder out = new StringBuilder();
        out.append(result.label()).append(" (").append(result.file()).append("), ").append(solution.getTraceLength())
                .append(" states, looping back to state ").append(solution.getLoopState()).append('\n');
        out.append("  bugs switched on: ").append(eval(result, "Bug", 0)).append("; clocks ahead: ")
                .append(eval(result, "ClockAhead", 0)).append('\n');
        for (int i = 0; i < solution.getTraceLength(); i++) {
            out.append(String.format("state %d:", i));
            for (String[] field : STATE) {
                String value = eval(result, field[1], i);
                if (!value.equals("{}")) {
                    out.append(' ').append(field[0]).append('=').append(value);
                }
            }
            out.append('\n');
            List<String> steps = new java.util.ArrayList<>();
            for (String[] event : EVENTS) {
                String who = eval(result, event[1], i);
                if (!who.equals("{}")) {
                    steps.add(event[0] + " " + who);
                }
            }
            out.append("  step: ").append(steps.isEmpty() ? "stutter" : String.join(", ", steps)).append('\n');
        }
        return out.toString();
    }

    private static String eval(Result result, String expression, int state) {
        try {
            Object value = result.solution().eval(CompUtil.parseOneExpression_fromString(result.world(), expression), state);
            return value.toString().replace("$", "").replace("protocol/", "").replaceAll("ClientAttempt(\\d+)", "c$1")
                    .replaceAll("WorkerAttempt(\\d+)", "w$1").replaceAll("Key(\\d+)", "k$1").replaceAll("([A-Za-z_]{2,})0\\b", "$1");
        } catch (edu.mit.csail.sdg.alloy4.Err e) {
            throw new IllegalStateException("cannot evaluate " + expression, e);
        }
    }

    private static CompModule parse(String file) {
        Path path = modelDir().resolve(file);
        return CompUtil.parseEverything_fromFile(A4Reporter.NOP, null, path.toString());
    }

    /**
     * Runs every command of the given files and prints what each found.
     *
     * @param args model files, relative to the model's folder
     */
    public static void main(String[] args) {
        for (String file : args) {
            for (String label : commands(file)) {
                System.out.println(run(file, label));
            }
        }
    }
}
