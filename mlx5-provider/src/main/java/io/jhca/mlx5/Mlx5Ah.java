package io.jhca.mlx5;

import java.util.concurrent.ThreadLocalRandom;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.init.RoceGids;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;

/**
 * A UD address handle: the 48-byte address vector ({@code struct mlx5_wqe_av}) formatted once, as rdma-core's
 * verbs.c {@code mlx5_create_ah} does for an Ethernet port, and copied into every datagram segment: stat_rate_sl =
 * (port rate 0) << 4 | (SL & 7) << 1; rlid = the RoCEv2 UDP source port (from the flow label, else random in
 * 0xc000..0xffff, {@code mlx5_ah_set_udp_sport}); rmac; tclass; hop_limit; grh_gid_fl = sgid_index << 20 | flow
 * label (the GRH bit stays 0 on RoCE); rgid. The remote QPN and Q_Key are set per WQE.
 */
final class Mlx5Ah extends AddressHandle {

    private final UnsafeBuffer av = new UnsafeBuffer(new byte[DatagramSeg.SIZE]);

    Mlx5Ah(Mlx5Pd pd, AhAttributes a) {
        super(pd, a);
        int sport = a.flowLabel() != 0 ? Mlx5Path.udpSportOfFlowLabel(a.flowLabel())
                : Mlx5Path.UDP_SPORT_MIN + ThreadLocalRandom.current().nextInt(0x10000 - Mlx5Path.UDP_SPORT_MIN);
        DatagramSeg.set(av, 0, 0L, 0, 0, DatagramSeg.roceStatRateSl(0, a.sl()), 0, sport,
                new UnsafeBuffer(RoceGids.macOf(a.dgid())), 0, a.trafficClass(), a.hopLimit(),
                DatagramSeg.grhGidFl(false, a.sgidIndex(), a.flowLabel()), new UnsafeBuffer(a.dgid().bytes()), 0);
    }

    /** The formatted address vector (48 bytes, big-endian fields). */
    DirectBuffer av() {
        return av;
    }

    @Override
    protected void destroy() {
        // nothing on the device: the AV lives in the WQEs
    }
}
