package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.AsyncEventChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;

/**
 * Every async EQE type the provider handles reaches the async event channel as the verbs event mlx5_ib makes of it,
 * naming the right QP or port: QP errors (0x5, 0x10, 0x11) put the QP in ERR, the informational QP events (0x1,
 * 0x2, 0x3, 0x13) and PATH_MIG_FAILED (0x7) leave it alone, a port change (0x9) names its port, an internal error
 * (0x8) is DEVICE_FATAL.
 */
class AsyncEqeTest {

    private ScriptedFirmware fw;
    private Mlx5Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void open() {
        fw = Fixtures.firmware().start();
        ctx = Fixtures.open(fw);
        pd = ctx.allocatePd();
        cq = ctx.createCq(16);
    }

    @AfterEach
    void close() {
        cq.close();
        pd.close();
        ctx.close();
    }

    @Test
    void qpEventsNameTheirQpAndOnlyErrorsMoveItToErr() throws Exception {
        int[] eqeTypes = {EventType.WQ_CATAS_ERROR, EventType.WQ_INVAL_REQ_ERROR, EventType.WQ_ACCESS_ERROR,
            EventType.PATH_MIG_FAILED, EventType.PATH_MIG, EventType.COMM_EST, EventType.SQ_DRAINED,
            EventType.SRQ_LAST_WQE};
        AsyncEvent.Type[] expected = {AsyncEvent.Type.QP_FATAL, AsyncEvent.Type.QP_REQ_ERR,
            AsyncEvent.Type.QP_ACCESS_ERR, AsyncEvent.Type.PATH_MIG_ERR, AsyncEvent.Type.PATH_MIG,
            AsyncEvent.Type.COMM_EST, AsyncEvent.Type.SQ_DRAINED, AsyncEvent.Type.QP_LAST_WQE_REACHED};
        boolean[] error = {true, true, true, false, false, false, false, false};
        AsyncEventChannel ch = ctx.asyncEventChannel();
        for (int i = 0; i < eqeTypes.length; i++) {
            QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq));
            QueuePair other = pd.createQp(QpInitAttributes.rc(cq, cq));
            qp.modify(QpAttributes.toInit(1));
            int type = eqeTypes[i];
            fw.postEqe(e -> Eqe.setQpEvent(e, 0, type, qp.qpn()));
            AsyncEvent ev = ch.getEvent(10_000);
            assertNotNull(ev, "no event for EQE type 0x" + Integer.toHexString(type));
            assertEquals(expected[i], ev.type(), "EQE type 0x" + Integer.toHexString(type));
            assertSame(qp, ev.qp(), "the event names the QP of the EQE");
            assertEquals(error[i] ? QpState.ERR : QpState.INIT, qp.state(), ev.toString());
            assertEquals(QpState.RESET, other.state(), "the other QP is untouched");
            ch.ackEvent(ev);
            qp.close();
            other.close();
        }
        assertNull(ch.getEvent(0));
    }

    @Test
    void portChangeNamesItsPortAndInternalErrorIsDeviceFatal() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        fw.postEqe(e -> Eqe.setPortChange(e, 0, EventType.PORT_CHANGE_DOWN, 1));
        AsyncEvent down = ch.getEvent(10_000);
        assertNotNull(down);
        assertEquals(AsyncEvent.Type.PORT_ERR, down.type());
        assertEquals(1, down.port());
        assertNull(down.element());
        fw.postEqe(e -> Eqe.setPortChange(e, 0, EventType.PORT_CHANGE_ACTIVE, 1));
        AsyncEvent up = ch.getEvent(10_000);
        assertNotNull(up);
        assertEquals(AsyncEvent.Type.PORT_ACTIVE, up.type());
        assertEquals(1, up.port());
        fw.postEqe(e -> {
            Eqe.setQpEvent(e, 0, EventType.INTERNAL_ERROR, 0);
        });
        AsyncEvent fatal = ch.getEvent(10_000);
        assertNotNull(fatal);
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, fatal.type());
        assertNull(fatal.element());
        ch.ackEvent(down);
        ch.ackEvent(up);
        ch.ackEvent(fatal);
    }
}
