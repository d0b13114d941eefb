package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The perf tools' loss line counts what a device resent inside the measured windows only. */
@Timeout(60)
class LossCountersTest {
    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe("127.0.74.1", "127.0.74.2");

    @Test
    void retransmissionsAndTimeoutsInsideTheWindowOnly() {
        try (Context ctx = Devices.open("rxe0");
             ProtectionDomain pd = ctx.allocatePd();
             DmaRegion mem = LabMemory.allocate(ctx, 4096);
             MemoryRegion mr = pd.register(mem, 0, 4096, io.jhca.verbs.Access.LOCAL_WRITE.bit());
             CompletionQueue cq = ctx.createCq(4);
             QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq))) {
            LossCounters c = new LossCounters(ctx);
            c.begin();
            c.stop();
            assertEquals(0L, c.moved().get("retransmitted_pkts"), "an empty window");
            // a peer nobody answers for: the first try, two retries after 4.096 us x 2^4 each, then RETRY_EXC_ERR
            qp.modify(QpAttributes.toInit(1));
            Gid nobody = Gid.parse("0000:0000:0000:0000:0000:ffff:7f4a:fffe");
            qp.modify(QpAttributes.toRtr(0x77, 0, AhAttributes.to(nobody).sgidIndex(1), Mtu.MTU_1024));
            qp.modify(QpAttributes.toRts(0).timeout(4).retryCnt(2));
            c.begin();
            qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(mr, 0, 64));
            WorkCompletion wc = new WorkCompletion();
            long end = System.nanoTime() + 20_000_000_000L;
            while (cq.poll(wc) == 0) {
                ctx.progress();
                assertTrue(System.nanoTime() < end, "no completion");
            }
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            c.stop();
            Map<String, Long> m = c.moved();
            assertEquals(2L, m.get("retransmitted_pkts"));
            assertEquals(3L, m.get("local_ack_timeout_err"));
            assertEquals(0L, m.get("rcvd_seq_err"));
            assertTrue(c.line("rxe0").startsWith(" Device rxe0 during measurement (packets lost and recovered): "
                    + "retransmitted_pkts 2, local_ack_timeout_err 3, rcvd_seq_err 0"), c.line("rxe0"));
            c.begin(); // windows add up; nothing happens in this one
            c.stop();
            assertEquals(2L, c.moved().get("retransmitted_pkts"));
        }
    }
}
