package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The RoCEv2 UDP source port rules, worked by hand (the flow-label mapping is also checked against libibverbs). */
class Mlx5PathTest {

    @Test
    void flowLabelOfQpnsFoldsTheProduct() {
        // 0x11 * 0x12 = 0x132: nothing above bit 19 to fold
        assertEquals(0x132, Mlx5Path.flowLabelOfQpns(0x11, 0x12));
        // 0x123456 * 0x654321 = 0x7336_2B0F_9B6 ... folded: v ^= v >> 20; v ^= v >> 40; low 20 bits
        long v = 0x123456L * 0x654321L;
        v ^= v >>> 20;
        v ^= v >>> 40;
        assertEquals((int) (v & 0xfffff), Mlx5Path.flowLabelOfQpns(0x123456, 0x654321));
        assertEquals(Mlx5Path.flowLabelOfQpns(0x100, 0x101), Mlx5Path.flowLabelOfQpns(0x101, 0x100), "symmetric");
    }

    @Test
    void udpSourcePortIsInTheRoceRange() {
        assertEquals(0xc000 | 0x132, Mlx5Path.udpSportOfFlowLabel(0x132));
        assertEquals(0xc000 | (0x0345 ^ 0x12), Mlx5Path.udpSportOfFlowLabel(0x48345));
        for (int fl = 0; fl < 1 << 20; fl += 977) {
            int p = Mlx5Path.udpSportOfFlowLabel(fl);
            assertEquals(0xc000, p & 0xc000);
        }
    }
}
