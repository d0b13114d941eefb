package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.Mtu;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

class SmokeTest {
    @Test
    void sendOnce() {
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 20, Mtu.MTU_1024)) {
            for (int i = 0; i < 5000; i++) {
                r.memA.buffer().putByte(i, (byte) (i * 7));
            }
            r.qpB.postRecv(new RecvWr().wrId(7).sge(r.mrB, 0, 8192));
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 5000));
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
            final WorkCompletion wc = r.expect(r.cqB, 7, WcStatus.SUCCESS);
            assertEquals(5000, wc.byteLen());
            assertEquals(WcOpcode.RECV, wc.opcode());
            for (int i = 0; i < 5000; i++) {
                assertEquals((byte) (i * 7), r.memB.buffer().getByte(i));
            }
        }
    }
}
