package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;

/** QP1: created on request at QPN 1, UD, once per device; free again once closed. */
class GsiQpTest {

    @Test
    void oneGsiQpPerDeviceAtQpnOne() {
        try (Context ctx = Verbs.open("rxe0");
             ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cq = ctx.createCq(8)) {
            assertTrue(ctx.supportsGsi());
            QueuePair gsi = pd.createQp(QpInitAttributes.gsi(cq, cq));
            assertEquals(1, gsi.qpn());
            assertEquals(QpType.UD, gsi.type());
            VerbsException e = assertThrows(VerbsException.class, () -> pd.createQp(QpInitAttributes.gsi(cq, cq)));
            assertEquals(VerbsException.EBUSY, e.errno());
            assertTrue(e.getMessage().contains("QP1"), e.getMessage());
            try (QueuePair ordinary = pd.createQp(QpInitAttributes.ud(cq, cq))) {
                assertTrue(ordinary.qpn() > 1, "ordinary QPs never get QPN 1");
            }
            gsi.close();
            try (QueuePair again = pd.createQp(QpInitAttributes.gsi(cq, cq))) {
                assertEquals(1, again.qpn());
            }
        }
    }
}
