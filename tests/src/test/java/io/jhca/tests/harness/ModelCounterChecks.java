package io.jhca.tests.harness;

import io.jhca.connectx.ConnectXModel;
import io.jhca.connectx.ModelCounters;
import io.jhca.connectx.ModelFunction;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.verbs.Context;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The ConnectX model's own view of a test: counters of driver mistakes it caught (a send doorbell that does not
 * match its WQE, a WQE it refused) and of its own faults must stay at zero
 * after every test, and its error counters (error CQEs, refused commands, overruns) after every test that is meant
 * to be clean. The one place of the suite that knows the model's API; a context that is not a simulated ConnectX
 * has nothing to check.
 */
public final class ModelCounterChecks {

    // Not here: CMD_DOORBELLS_RECOVERED. Two threads running commands at once (two connections set up together)
    // each write their slot's bit to cmd_dbell, one store each as mlx5_core does; on hardware both arrive, in the
    // model's memory BAR the second can replace the first before the firmware thread takes it, and the ownership
    // scan runs that command. That is the model's limit, not a driver mistake.
    /** Never expected, whatever the test does: each is a driver or model bug. */
    static final Set<ModelCounters.Counter> NEVER = EnumSet.of(
            ModelCounters.Counter.SQ_DOORBELL_MISMATCHES,
            ModelCounters.Counter.MODEL_ERRORS,
            ModelCounters.Counter.EQES_DROPPED,
            ModelCounters.Counter.DMA_FAULTS);

    /** Expected only from a test that makes errors on purpose ({@link Harness#expectErrors()}). */
    static final Set<ModelCounters.Counter> ERRORS = EnumSet.of(
            ModelCounters.Counter.MALFORMED_WQES,
            ModelCounters.Counter.ERROR_CQES,
            ModelCounters.Counter.COMMAND_ERRORS,
            ModelCounters.Counter.CQES_DROPPED,
            ModelCounters.Counter.CQ_OVERRUNS,
            ModelCounters.Counter.STRAY_COMPLETIONS);

    private ModelCounterChecks() {
    }

    /** The model behind {@code ctx}, or null if it is not a simulated ConnectX. */
    public static ConnectXModel model(Context ctx) {
        if (ctx instanceof Mlx5Context && ((Mlx5Context) ctx).function() instanceof ModelFunction) {
            return ((ModelFunction) ((Mlx5Context) ctx).function()).model();
        }
        return null;
    }

    /** The counters of {@code ctx}'s model, for messages ("" if none). */
    public static String describe(Context ctx) {
        ConnectXModel m = model(ctx);
        return m == null ? "" : ctx.name() + " model counters: " + m.counters();
    }

    /**
     * The counters that are not zero and should be: {@link #NEVER} always, {@link #ERRORS} as well when
     * {@code clean}. Empty if {@code ctx} is not a simulated ConnectX.
     */
    public static List<String> violations(Context ctx, boolean clean) {
        List<String> out = new ArrayList<>();
        ConnectXModel m = model(ctx);
        if (m == null) {
            return out;
        }
        for (ModelCounters.Counter c : ModelCounters.Counter.values()) {
            boolean checked = NEVER.contains(c) || (clean && ERRORS.contains(c));
            long v = m.counters().get(c);
            if (checked && v != 0) {
                out.add(c.name().toLowerCase() + "=" + v);
            }
        }
        if (!out.isEmpty()) {
            String last = m.lastCommandError();
            out.add("(all: " + m.counters() + (last != null ? "; last refused command: " + last : "") + ")");
        }
        return out;
    }
}
