package io.jhca.connectx;

import java.net.InetAddress;
import java.util.function.UnaryOperator;

import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeKeys;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;

/**
 * The model's wire: one rxe device per simulated function, bound to the port's IP (RoCEv2, UDP 4791), driven from
 * the firmware thread's duty cycle (progress mode CALLER, so one thread runs the whole model and every rxe call is made
 * from it). The firmware mirrors its objects on it through the verbs API: PD to PD, mkey to an MR under the very same
 * key, CQ to CQ, QP to QP with the same QPN; so a simulated ConnectX and any rxe device speak one RoCEv2
 * implementation.
 */
final class RxeMirror implements AutoCloseable {

    /** rxe fills GID index 1 with the device's IP address (index 0 is the link-local GID). */
    static final int PORT_GID_INDEX = 1;

    final RxeContext context;

    /** {@code wire} may add to the link's configuration (fault injection, a pcap trace); progress stays CALLER. */
    RxeMirror(String name, InetAddress address, UnaryOperator<RxeDeviceConfig.Builder> wire) {
        this.context = RxeProvider.open(wire.apply(RxeDeviceConfig.builder(name + "-wire").address(address))
                .progressMode(ProgressMode.CALLER).build());
    }

    /** One engine duty cycle: received packets, timers, sends. */
    int progress() {
        return context.progress();
    }

    /**
     * Registers a host range the model resolved (never touching anything the IOMMU did not map) under {@code key}, so
     * the rxe engine accepts exactly the keys the driver's WQEs and its peers name.
     */
    MemoryRegion register(ProtectionDomain pd, long host, long length, int access, int key) {
        HostRangeRegion region = new HostRangeRegion(host, length);
        return RxeKeys.register(pd, region, 0, length, access, key);
    }

    /** Deregisters and drops the host-range view. */
    static void deregister(MemoryRegion mr) {
        if (mr == null) {
            return;
        }
        DmaRegion region = mr.region();
        mr.close();
        if (region instanceof HostRangeRegion) {
            region.close();
        }
    }

    @Override
    public void close() {
        context.close();
    }
}
