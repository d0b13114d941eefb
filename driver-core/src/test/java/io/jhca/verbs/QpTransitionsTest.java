package io.jhca.verbs;

import static io.jhca.verbs.QpAttrMask.ACCESS_FLAGS;
import static io.jhca.verbs.QpAttrMask.ALT_PATH;
import static io.jhca.verbs.QpAttrMask.AV;
import static io.jhca.verbs.QpAttrMask.CAP;
import static io.jhca.verbs.QpAttrMask.CUR_STATE;
import static io.jhca.verbs.QpAttrMask.DEST_QPN;
import static io.jhca.verbs.QpAttrMask.EN_SQD_ASYNC_NOTIFY;
import static io.jhca.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC;
import static io.jhca.verbs.QpAttrMask.MAX_QP_RD_ATOMIC;
import static io.jhca.verbs.QpAttrMask.MIN_RNR_TIMER;
import static io.jhca.verbs.QpAttrMask.PATH_MIG_STATE;
import static io.jhca.verbs.QpAttrMask.PATH_MTU;
import static io.jhca.verbs.QpAttrMask.PKEY_INDEX;
import static io.jhca.verbs.QpAttrMask.PORT;
import static io.jhca.verbs.QpAttrMask.QKEY;
import static io.jhca.verbs.QpAttrMask.RATE_LIMIT;
import static io.jhca.verbs.QpAttrMask.RETRY_CNT;
import static io.jhca.verbs.QpAttrMask.RNR_RETRY;
import static io.jhca.verbs.QpAttrMask.RQ_PSN;
import static io.jhca.verbs.QpAttrMask.SQ_PSN;
import static io.jhca.verbs.QpAttrMask.STATE;
import static io.jhca.verbs.QpAttrMask.TIMEOUT;
import static io.jhca.verbs.QpState.ERR;
import static io.jhca.verbs.QpState.INIT;
import static io.jhca.verbs.QpState.RESET;
import static io.jhca.verbs.QpState.RTR;
import static io.jhca.verbs.QpState.RTS;
import static io.jhca.verbs.QpState.SQD;
import static io.jhca.verbs.QpState.SQE;
import static io.jhca.verbs.QpType.RC;
import static io.jhca.verbs.QpType.UC;
import static io.jhca.verbs.QpType.UD;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class QpTransitionsTest {
    /** Every bit ibv_qp_attr_mask defines (verbs.h): 0..20 and 25. */
    private static final int DEFINED_BITS = (1 << 21) - 1 | RATE_LIMIT;
    private static final String MISSING = "missing required attribute(s) ";
    private static final String FORBIDDEN = "attribute(s) not allowed: ";

    // ---- exhaustive: every type x current x next ----

    @TestFactory
    List<DynamicTest> everyTypeAndTransition() {
        List<DynamicTest> tests = new ArrayList<>();
        for (QpType type : QpType.values()) {
            for (QpState cur : QpState.values()) {
                for (QpState next : QpState.values()) {
                    String name = type + " " + cur + "->" + next;
                    tests.add(DynamicTest.dynamicTest(name, QpTransitions.isValid(cur, next)
                        ? () -> validTransition(type, cur, next)
                        : () -> invalidTransition(type, cur, next)));
                }
            }
        }
        assertEquals(3 * 7 * 7, tests.size());
        return tests;
    }

    private static void invalidTransition(QpType type, QpState cur, QpState next) {
        assertEquals(0, QpTransitions.requiredMask(type, cur, next));
        assertEquals(0, QpTransitions.optionalMask(type, cur, next));
        List<Integer> masks = new ArrayList<>(List.of(0, STATE, DEFINED_BITS, -1));
        for (int bit = 0; bit < 32; bit++) {
            masks.add(STATE | 1 << bit);
        }
        // the masks that are right for the legal transitions out of cur, and into next
        for (QpState s : QpState.values()) {
            masks.add(QpTransitions.requiredMask(type, cur, s) | QpTransitions.optionalMask(type, cur, s));
            masks.add(QpTransitions.requiredMask(type, s, next));
        }
        for (int mask : masks) {
            String msg = refused(() -> QpTransitions.check(type, cur, next, mask));
            assertTrue(msg.startsWith("modify QP " + cur + "->" + next), msg);
            assertTrue(msg.contains(": illegal transition (" + cur + " may go to "), msg);
            // claiming cur through CUR_STATE, from whatever state the QP is tracked in, is just as illegal
            String claimed = refused(() -> QpTransitions.check(type, RTS, next, mask | CUR_STATE, cur));
            assertTrue(claimed.contains("illegal transition"), claimed);
        }
    }

    private static void validTransition(QpType type, QpState cur, QpState next) {
        int req = QpTransitions.requiredMask(type, cur, next);
        int opt = QpTransitions.optionalMask(type, cur, next);
        assertEquals(0, req & opt, "required and optional overlap");
        assertEquals(cur != next, (req & STATE) != 0, "STATE is required exactly when the state changes");
        assertEquals(cur == next, (opt & STATE) != 0, "STATE is optional exactly when the state stays");
        assertEquals(0, (req | opt) & ~DEFINED_BITS, "only defined bits");

        assertPasses(type, cur, next, req);
        assertPasses(type, cur, next, req | opt);
        for (int bit : bits(opt)) {
            assertPasses(type, cur, next, req | bit);
        }
        // without CUR_STATE the claimed state is ignored, null or not
        assertDoesNotThrow(() -> QpTransitions.check(type, cur, next, req, null));
        for (QpState other : QpState.values()) {
            assertDoesNotThrow(() -> QpTransitions.check(type, cur, next, req | opt & ~CUR_STATE, other));
        }

        for (int bit : bits(req)) {
            String msg = refused(() -> QpTransitions.check(type, cur, next, req & ~bit));
            assertTrue(msg.startsWith("modify QP " + cur + "->" + next + " (" + type + "): "), msg);
            assertEquals(names(bit), listed(msg, MISSING), msg);
            assertFalse(msg.contains(FORBIDDEN), msg);
        }
        for (int b = 0; b < 32; b++) {
            int bit = 1 << b;
            if ((bit & (req | opt)) != 0) {
                continue;
            }
            String msg = refused(() -> QpTransitions.check(type, cur, next, req | bit));
            assertTrue(msg.startsWith("modify QP " + cur + "->" + next + " (" + type + "): "), msg);
            assertEquals(names(bit), listed(msg, FORBIDDEN), msg);
            assertFalse(msg.contains(MISSING), msg);
        }
        // several faults at once are all named
        int forbidden = DEFINED_BITS & ~(req | opt);
        if (req != 0 && forbidden != 0) {
            String msg = refused(() -> QpTransitions.check(type, cur, next, forbidden));
            assertEquals(names(req), listed(msg, MISSING), msg);
            assertEquals(names(forbidden), listed(msg, FORBIDDEN), msg);
        }
    }

    // ---- spot checks, written out by hand from the IBTA table (kernel verbs.c qp_state_table) ----

    @Test
    void validityMatrixByHand() {
        // rows: from RESET, INIT, RTR, RTS, SQD, SQE, ERR; columns: to the same order
        String[] rows = {
            "RESET: xx.....",
            "INIT:  xxx...x",
            "RTR:   x..x..x",
            "RTS:   x..xx.x",
            "SQD:   x..xx.x",
            "SQE:   x..x..x",
            "ERR:   x.....x",
        };
        for (QpState cur : QpState.values()) {
            String row = rows[cur.ordinal()];
            assertTrue(row.startsWith(cur + ":"));
            String cells = row.substring(row.length() - 7);
            for (QpState next : QpState.values()) {
                assertEquals(cells.charAt(next.ordinal()) == 'x', QpTransitions.isValid(cur, next), cur + "->" + next);
            }
        }
    }

    @Test
    void resetToInit() {
        assertEquals(STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, QpTransitions.requiredMask(RC, RESET, INIT));
        assertEquals(STATE | PKEY_INDEX | PORT | ACCESS_FLAGS, QpTransitions.requiredMask(UC, RESET, INIT));
        assertEquals(STATE | PKEY_INDEX | PORT | QKEY, QpTransitions.requiredMask(UD, RESET, INIT));
        for (QpType t : QpType.values()) {
            assertEquals(0, QpTransitions.optionalMask(t, RESET, INIT));
        }
    }

    @Test
    void initToRtr() {
        assertEquals(STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
            QpTransitions.requiredMask(RC, INIT, RTR));
        assertEquals(STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN, QpTransitions.requiredMask(UC, INIT, RTR));
        assertEquals(STATE, QpTransitions.requiredMask(UD, INIT, RTR));
        assertEquals(ALT_PATH | ACCESS_FLAGS | PKEY_INDEX, QpTransitions.optionalMask(RC, INIT, RTR));
        assertEquals(ALT_PATH | ACCESS_FLAGS | PKEY_INDEX, QpTransitions.optionalMask(UC, INIT, RTR));
        assertEquals(PKEY_INDEX | QKEY, QpTransitions.optionalMask(UD, INIT, RTR));
    }

    @Test
    void rtrToRts() {
        assertEquals(STATE | SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
            QpTransitions.requiredMask(RC, RTR, RTS));
        assertEquals(STATE | SQ_PSN, QpTransitions.requiredMask(UC, RTR, RTS));
        assertEquals(STATE | SQ_PSN, QpTransitions.requiredMask(UD, RTR, RTS));
        assertEquals(CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            QpTransitions.optionalMask(RC, RTR, RTS));
        assertEquals(CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE, QpTransitions.optionalMask(UC, RTR, RTS));
        assertEquals(CUR_STATE | QKEY, QpTransitions.optionalMask(UD, RTR, RTS));
    }

    @Test
    void sameStateModifies() {
        assertEquals(0, QpTransitions.requiredMask(RC, RTS, RTS));
        assertEquals(STATE | CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER,
            QpTransitions.optionalMask(RC, RTS, RTS));
        assertEquals(STATE | CUR_STATE | QKEY, QpTransitions.optionalMask(UD, RTS, RTS));
        assertEquals(STATE | PKEY_INDEX | PORT | QKEY, QpTransitions.optionalMask(UD, INIT, INIT));
        assertEquals(STATE | PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | MAX_DEST_RD_ATOMIC
            | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE,
            QpTransitions.optionalMask(RC, SQD, SQD));
        assertEquals(STATE | AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE,
            QpTransitions.optionalMask(UC, SQD, SQD));
        assertEquals(STATE | PKEY_INDEX | QKEY, QpTransitions.optionalMask(UD, SQD, SQD));
        // an RTS->RTS modify of the access flags alone, with no STATE bit, as ibv allows
        assertDoesNotThrow(() -> QpTransitions.check(RC, RTS, RTS, ACCESS_FLAGS));
        assertDoesNotThrow(() -> QpTransitions.check(RC, RESET, RESET, 0));
    }

    @Test
    void drainAndRecover() {
        for (QpType t : QpType.values()) {
            assertEquals(STATE, QpTransitions.requiredMask(t, RTS, SQD));
            assertEquals(EN_SQD_ASYNC_NOTIFY, QpTransitions.optionalMask(t, RTS, SQD));
            assertEquals(STATE, QpTransitions.requiredMask(t, SQD, RTS));
            assertEquals(STATE, QpTransitions.requiredMask(t, SQE, RTS));
        }
        assertEquals(CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE,
            QpTransitions.optionalMask(RC, SQD, RTS));
        assertEquals(CUR_STATE | QKEY, QpTransitions.optionalMask(UD, SQE, RTS));
        assertEquals(CUR_STATE | ACCESS_FLAGS, QpTransitions.optionalMask(UC, SQE, RTS));
        assertEquals(0, QpTransitions.optionalMask(RC, SQE, RTS), "RC never enters SQE; kernel lists nothing");
    }

    @Test
    void resetAndErrorTakeOnlyState() {
        for (QpType t : QpType.values()) {
            for (QpState s : QpState.values()) {
                int toReset = s == RESET ? 0 : STATE;
                assertEquals(toReset, QpTransitions.requiredMask(t, s, RESET), s + "->RESET");
                assertEquals(s == RESET ? STATE : 0, QpTransitions.optionalMask(t, s, RESET));
                if (s != RESET) {
                    assertEquals(s == ERR ? 0 : STATE, QpTransitions.requiredMask(t, s, ERR), s + "->ERR");
                    assertEquals(s == ERR ? STATE : 0, QpTransitions.optionalMask(t, s, ERR));
                }
            }
        }
    }

    @Test
    void capAndRateLimitNeverForRcUcUd() {
        for (QpType t : QpType.values()) {
            for (QpState cur : QpState.values()) {
                for (QpState next : QpState.values()) {
                    int all = QpTransitions.requiredMask(t, cur, next) | QpTransitions.optionalMask(t, cur, next);
                    assertEquals(0, all & (CAP | RATE_LIMIT), t + " " + cur + "->" + next);
                }
            }
        }
    }

    @Test
    void curStateOnlyOnTransitionsIntoRtsFromRtrRtsSqdSqe() {
        Set<QpState> from = EnumSet.of(RTR, RTS, SQD, SQE);
        for (QpType t : QpType.values()) {
            for (QpState cur : QpState.values()) {
                for (QpState next : QpState.values()) {
                    if ((QpTransitions.optionalMask(t, cur, next) & CUR_STATE) != 0) {
                        assertTrue(from.contains(cur) && next == RTS, t + " " + cur + "->" + next);
                    }
                }
            }
        }
    }

    // ---- messages ----

    @Test
    void messagesAsDocumented() {
        VerbsException e = assertThrows(VerbsException.class,
            () -> QpTransitions.check(RC, RESET, RTR, STATE | AV));
        assertEquals(VerbsException.EINVAL, e.errno());
        assertEquals("modify QP RESET->RTR: illegal transition (RESET may go to RESET, INIT)", e.getMessage());

        assertEquals("modify QP INIT->RTR (RC): missing required attribute(s) AV|PATH_MTU|DEST_QPN",
            refused(() -> QpTransitions.check(RC, INIT, RTR, STATE | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER)));
        assertEquals("modify QP RTR->RTS (UD): attribute(s) not allowed: TIMEOUT|RETRY_CNT",
            refused(() -> QpTransitions.check(UD, RTR, RTS, STATE | SQ_PSN | TIMEOUT | RETRY_CNT)));
        assertEquals("modify QP INIT->RTR (UD): missing required attribute(s) STATE; attribute(s) not allowed: AV",
            refused(() -> QpTransitions.check(UD, INIT, RTR, AV)));
        assertEquals("modify QP ERR->INIT: illegal transition (ERR may go to RESET, ERR)",
            refused(() -> QpTransitions.check(UD, ERR, INIT, STATE | PKEY_INDEX | PORT | QKEY)));
    }

    // ---- CUR_STATE: the caller's claimed current state replaces the tracked one ----

    @Test
    void claimedCurrentStateIsUsed() {
        // a UD QP the driver still believes in RTS, which the consumer knows went to SQE: SQE->RTS
        assertDoesNotThrow(() -> QpTransitions.check(UD, RTS, RTS, STATE | CUR_STATE, SQE));
        assertDoesNotThrow(() -> QpTransitions.check(UC, RTS, RTS, STATE | CUR_STATE | ACCESS_FLAGS, SQE));
        // QKEY is fine from SQE for UD but not for UC
        assertEquals("modify QP SQE->RTS (UC, CUR_STATE given; QP is in RTS): attribute(s) not allowed: QKEY",
            refused(() -> QpTransitions.check(UC, RTS, RTS, STATE | CUR_STATE | QKEY, SQE)));
        // RC lists no optional attribute for SQE->RTS, so CUR_STATE itself is refused there
        assertEquals(List.of("CUR_STATE"), List.copyOf(listed(
            refused(() -> QpTransitions.check(RC, RTS, RTS, STATE | CUR_STATE, SQE)), FORBIDDEN)));
        // tracked INIT, claimed RTR: judged as RTR->RTS
        int rtsMask = QpTransitions.requiredMask(RC, RTR, RTS) | CUR_STATE;
        assertDoesNotThrow(() -> QpTransitions.check(RC, INIT, RTS, rtsMask, RTR));
        assertTrue(refused(() -> QpTransitions.check(RC, INIT, RTS, rtsMask & ~CUR_STATE, RTR))
            .contains("illegal transition (INIT may go to"));
        // the claimed state is checked as a transition of its own: claiming RESET makes RESET->RTS illegal
        assertEquals("modify QP RESET->RTS (CUR_STATE given; QP is in RTR): illegal transition"
            + " (RESET may go to RESET, INIT)", refused(() -> QpTransitions.check(RC, RTR, RTS, rtsMask, RESET)));
        // CUR_STATE where it is not allowed (the kernel allows it only from RTR, RTS, SQD, SQE)
        int initRtr = QpTransitions.requiredMask(RC, INIT, RTR);
        assertEquals(List.of("CUR_STATE"), List.copyOf(listed(
            refused(() -> QpTransitions.check(RC, INIT, RTR, initRtr | CUR_STATE)), FORBIDDEN)));
        assertTrue(refused(() -> QpTransitions.check(RC, RTS, RTS, STATE | CUR_STATE, null))
            .contains("CUR_STATE is set but no current state was given"));
    }

    @Test
    void nullArgumentsAreEinval() {
        for (Runnable r : List.<Runnable>of(
                () -> QpTransitions.check(null, INIT, RTR, STATE),
                () -> QpTransitions.check(UD, null, RTR, STATE),
                () -> QpTransitions.check(UD, INIT, null, STATE),
                () -> QpTransitions.requiredMask(null, INIT, RTR),
                () -> QpTransitions.optionalMask(UD, null, RTR),
                () -> QpTransitions.isValid(INIT, null))) {
            VerbsException e = assertThrows(VerbsException.class, r::run);
            assertEquals(VerbsException.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("is null"), e.getMessage());
        }
    }

    @Test
    void tableDimensionsMatchTheEnums() {
        assertEquals(QpState.values().length, QpTransitionTable.STATES);
        assertEquals(QpType.values().length, QpTransitionTable.TYPES);
    }

    @Test
    void passingCheckAllocatesNothing() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        QpType[] types = QpType.values();
        QpState[] states = QpState.values();
        int[] req = new int[types.length * states.length * states.length];
        for (int i = 0; i < req.length; i++) {
            req[i] = QpTransitions.requiredMask(types[i / 49], states[i / 7 % 7], states[i % 7]);
        }
        long sink = 0;
        for (int round = 0; round < 2; round++) { // round 0 warms up
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int n = 0; n < 20_000; n++) {
                for (int i = 0; i < req.length; i++) {
                    QpState cur = states[i / 7 % 7];
                    QpState next = states[i % 7];
                    if (QpTransitions.isValid(cur, next)) {
                        QpTransitions.check(types[i / 49], cur, next, req[i]);
                        sink += req[i];
                    }
                }
            }
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            if (round == 1) {
                // ~1.5 million checks: even 8 bytes each would be 12 MB
                assertTrue(allocated < 256 * 1024, "passing checks allocated " + allocated + " bytes");
            }
        }
        assertTrue(sink != 0);
    }

    // ---- helpers ----

    private static void assertPasses(QpType type, QpState cur, QpState next, int mask) {
        assertDoesNotThrow(() -> QpTransitions.check(type, cur, next, mask),
            () -> type + " " + cur + "->" + next + " mask " + QpAttrMask.describe(mask));
    }

    private static String refused(Runnable r) {
        VerbsException e = assertThrows(VerbsException.class, r::run);
        assertEquals(VerbsException.EINVAL, e.errno());
        return e.getMessage();
    }

    /** The attribute names listed after marker, up to "; " or the end. */
    private static Set<String> listed(String msg, String marker) {
        int at = msg.indexOf(marker);
        assertTrue(at >= 0, () -> "no '" + marker + "' in: " + msg);
        String rest = msg.substring(at + marker.length());
        int end = rest.indexOf(';');
        return new TreeSet<>(List.of((end < 0 ? rest : rest.substring(0, end)).split("\\|")));
    }

    private static Set<String> names(int mask) {
        Set<String> out = new TreeSet<>();
        for (int bit : bits(mask)) {
            out.add(QpAttrMask.describe(bit));
        }
        return out;
    }

    private static List<Integer> bits(int mask) {
        List<Integer> out = new ArrayList<>();
        for (int b = 0; b < 32; b++) {
            if ((mask & 1 << b) != 0) {
                out.add(1 << b);
            }
        }
        return out;
    }
}
