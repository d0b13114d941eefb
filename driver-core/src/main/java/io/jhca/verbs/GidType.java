package io.jhca.verbs;

/**
 * The type of a GID table entry ({@code enum ibv_gid_type} of rdma-core's verbs.h, {@code ibv_query_gid_type}):
 * an InfiniBand GID, or on Ethernet a RoCE v1 (GRH over Ethertype 0x8915) or RoCE v2 (UDP 4791) GID. The kernel
 * lists an Ethernet port's addresses once per type the port speaks, v1 then v2 (drivers/infiniband/core/
 * roce_gid_mgmt.c): twice on a ConnectX, once (v2) on rxe.
 */
public enum GidType {
    IB, ROCE_V1, ROCE_V2;

    /** ibv_devinfo's spelling ("RoCE v1", "RoCE v2"; nothing for IB). */
    public String label() {
        return this == ROCE_V1 ? "RoCE v1" : this == ROCE_V2 ? "RoCE v2" : "";
    }
}
