package io.jhca.rxe;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.jhca.verbs.Mtu;

/**
 * An RDMA WRITE's last (or only) packet carries exactly what its RETH still owes (IBTA 9.7.5.1.2, C9-92; Linux
 * rxe's check_rkey compares the packet length with the residual): a WRITE_ONLY whose RETH promises more than it
 * carries is an invalid request. It is NAKed, nothing of it lands in memory, and the responder QP goes to ERR.
 */
class WriteLengthTest {

    @ParameterizedTest(name = "RETH {0} B, payload {1} B")
    @CsvSource({
            "8192, 1024", // the reported case: one MTU of payload under a RETH for eight
            "1025, 1024", // one byte more than carried
            "1024, 1023", // one byte more than carried, within an MTU
            "4,    0",    // a zero-payload packet that promises bytes
    })
    void writeOnlyCarryingLessThanItsRethIsRefused(final int rethLength, final int payload) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            peer.writeOnly(r.qpB.qpn(), 0x1000, r.mrB.address(), r.mrB.rkey(), rethLength, payload);
            InvalidRequestTest.refusedAsInvalid(r, r.qpB, rethLength);
        }
    }
}
