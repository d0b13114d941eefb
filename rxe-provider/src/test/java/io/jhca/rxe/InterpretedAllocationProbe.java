package io.jhca.rxe;

import java.util.Arrays;
import java.util.function.UnaryOperator;

import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.WorkCompletion;

/**
 * The child JVM of {@link SteadyStateAllocationTest#interpretedDataPathAllocatesNothing}, run with -Xint: the
 * allocation test's rounds in the interpreter, which has no escape analysis, so every object the data path creates
 * is counted. Prints "ROUND [posting, engine A, engine B, polling]" (bytes) for three sets of 50 rounds, after 50
 * that do the first-use work (class initialization, call-site linkage). Its own addresses (127.13.0.x), so that
 * it never meets the parent's devices.
 */
final class InterpretedAllocationProbe {
    private InterpretedAllocationProbe() {
    }

    public static void main(final String[] args) {
        try (Rig r = new Rig(RxeDeviceConfig.builder("xintA").address("127.13.0.2").progressMode(ProgressMode.CALLER)
                .build(), RxeDeviceConfig.builder("xintB").address("127.13.0.3").progressMode(ProgressMode.CALLER).build(),
                QpType.RC, 1 << 20, Mtu.MTU_1024, UnaryOperator.identity())) {
            final RecvWr recv = new RecvWr().wrId(1).sge(r.mrB, 0, 8192);
            final WorkCompletion wc = new WorkCompletion();
            final long[] bytes = new long[4];
            SteadyStateAllocationTest.run(r, recv, wc, 50, bytes);
            for (int k = 0; k < 3; k++) {
                Arrays.fill(bytes, 0);
                SteadyStateAllocationTest.run(r, recv, wc, 50, bytes);
                System.out.println("ROUND " + Arrays.toString(bytes));
            }
        }
    }
}
