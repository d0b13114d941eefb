package io.jhca.verbs;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.util.ArrayDeque;
import java.util.Deque;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Opens the in-test provider's device and closes what a test made, children first. */
abstract class VerbsTestSupport {
    protected Context ctx;
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    @BeforeEach
    void openDevice() {
        ctx = Verbs.open("fake0");
    }

    @AfterEach
    void closeAll() throws Exception {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        ctx.close();
    }

    protected <T extends AutoCloseable> T track(T resource) {
        opened.push(resource);
        return resource;
    }

    protected DmaRegion memory(long bytes) {
        return track(DmaMemory.allocate(bytes));
    }

    /** A QP moved to RTS with legal attributes. */
    protected QueuePair rtsQp(ProtectionDomain pd, QpInitAttributes init) {
        QueuePair qp = track(pd.createQp(init));
        if (qp.type() == QpType.UD) {
            qp.modify(QpAttributes.toInitUd(1, 0x11111111));
            qp.modify(QpAttributes.toRtrUd());
            qp.modify(QpAttributes.toRtsUd(0));
        } else {
            qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
            QpAttributes rtr = QpAttributes.toRtr(0x12, 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024);
            if (qp.type() == QpType.UC) {
                rtr.without(QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
            }
            qp.modify(rtr);
            qp.modify(qp.type() == QpType.UC ? QpAttributes.toRtsUd(0) : QpAttributes.toRts(0));
        }
        assertEquals(QpState.RTS, qp.state());
        return qp;
    }

    static VerbsException refused(int errno, String fragment, Runnable r) {
        VerbsException e = assertThrows(VerbsException.class, r::run);
        assertEquals(errno, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains(fragment), () -> "message '" + e.getMessage() + "' lacks '" + fragment + "'");
        return e;
    }
}
