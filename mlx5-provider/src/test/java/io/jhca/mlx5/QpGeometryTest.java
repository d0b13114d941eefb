package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpType;
import io.jhca.verbs.VerbsException;

/** Ring sizes as rdma-core's verbs.c computes them, worked by hand. */
class QpGeometryTest {

    private static QpGeometry g(QpType t, int sendWr, int recvWr, int sendSge, int recvSge, int inline) {
        return QpGeometry.of(t, new QpCapabilities(sendWr, recvWr, sendSge, recvSge, inline), 32, 15);
    }

    @Test
    void rcSendQueue() {
        // 48 (ctrl + raddr + atomic) + 16 = 64-byte WQEs; 16 x 64 = 1024 bytes = 16 WQEBBs
        QpGeometry x = g(QpType.RC, 16, 16, 1, 1, 0);
        assertEquals(16, x.sqWqeCnt());
        assertEquals(16, x.sqMaxPost());
        assertEquals(64, x.sqWqeSize());
        assertEquals(64 - 48 - 4, x.granted().maxInlineData());
        // inline 64: 48 + align(4 + 64, 16) = 128-byte WQEs; 16 x 128 = 2048 = 32 WQEBBs, max_post 16
        QpGeometry y = g(QpType.RC, 16, 16, 1, 1, 64);
        assertEquals(32, y.sqWqeCnt());
        assertEquals(16, y.sqMaxPost());
        assertEquals(128 - 48 - 4, y.granted().maxInlineData());
        assertEquals(5, y.granted().maxSendSge(), "(128 - 48) / 16");
        // 3 WRs of 64 bytes: roundup_pow_of_two(192) = 256 = 4 WQEBBs, max_post 4
        QpGeometry z = g(QpType.RC, 3, 1, 1, 1, 0);
        assertEquals(4, z.sqWqeCnt());
        assertEquals(4, z.sqMaxPost());
    }

    @Test
    void udAndUcOverheads() {
        assertEquals(128, g(QpType.UD, 1, 1, 1, 1, 0).sqWqeSize(), "64 (ctrl + datagram) + 16");
        assertEquals(64, g(QpType.UC, 1, 1, 2, 1, 0).sqWqeSize(), "32 (ctrl + raddr) + 32");
    }

    @Test
    void receiveQueue() {
        QpGeometry one = g(QpType.RC, 1, 1, 1, 1, 0);
        assertEquals(4, one.rqWqeCnt(), "a receive queue is at least 64 bytes: 4 x 16");
        assertEquals(4, one.rqWqeShift());
        assertEquals(4, one.granted().maxRecvWr());
        QpGeometry three = g(QpType.RC, 1, 5, 1, 3, 0);
        assertEquals(6, three.rqWqeShift(), "3 SGEs: 64-byte WQEs");
        assertEquals(8, three.rqWqeCnt(), "roundup_pow_of_two(5)");
        assertEquals(4, three.granted().maxRecvSge());
        assertEquals(4096, three.bufferBytes());
        assertEquals(0, g(QpType.RC, 1, 0, 1, 1, 0).rqWqeCnt(), "no receive queue");
    }

    @Test
    void limits() {
        assertThrows(VerbsException.class, () -> g(QpType.UD, 1, 1, 1, 1, 1000), "more than 63 DS");
        VerbsException e = assertThrows(VerbsException.class, () -> g(QpType.RC, (1 << 15) + 1, 1, 1, 1, 0));
        assertEquals(VerbsException.ENOMEM, e.errno());
    }

    @Test
    void aSendWqeOfExactly63DsIsTheLongest() {
        // the control segment's DS count is 6 bits: 63 x 16 = 1008 bytes is the longest send WQE, and it is allowed
        // RC: 48 (ctrl + raddr + atomic) + 60 SGEs x 16 = 1008
        assertEquals(1024, g(QpType.RC, 1, 0, 60, 1, 0).sqWqeSize(), "1008 bytes, in 64-byte WQEBBs");
        VerbsException sges = assertThrows(VerbsException.class, () -> g(QpType.RC, 1, 0, 61, 1, 0), "1024 bytes: 64 DS");
        assertEquals(VerbsException.EINVAL, sges.errno());
        assertTrue(sges.getMessage().contains("63 DS"), sges.getMessage());
        // inline: 48 + align(4 + 956, 16) = 1008; one byte more rounds to 1024
        assertEquals(956, g(QpType.RC, 1, 0, 1, 1, 956).granted().maxInlineData());
        VerbsException inline = assertThrows(VerbsException.class, () -> g(QpType.RC, 1, 0, 1, 1, 957));
        assertEquals(VerbsException.EINVAL, inline.errno());
        assertTrue(inline.getMessage().contains("63 DS"), inline.getMessage());
    }

    @Test
    void grantedSendSgesNeverExceedTheDeviceMaxSge() {
        // inline 512 makes 576-byte RC WQEs, room for (576 - 48) / 16 = 33 gather entries; the device has 32
        // (max_sge), so 32 is what the QP grants: postSend checks SGE counts against the granted value
        QpGeometry x = g(QpType.RC, 1, 0, 1, 1, 512);
        assertEquals(576, x.sqWqeSize());
        assertEquals(32, x.granted().maxSendSge(), "min(max_sge 32, 33 that fit)");
        assertEquals(33, (x.sqWqeSize() - QpGeometry.overhead(QpType.RC)) / 16, "the WQE itself would take 33");
        assertEquals(4, QpGeometry.of(QpType.RC, new QpCapabilities(1, 0, 1, 1, 512), 4, 15).granted().maxSendSge(),
                "a device of 4 SGEs grants 4");
    }
}
