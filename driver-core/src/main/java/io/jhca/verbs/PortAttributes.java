package io.jhca.verbs;

/** What {@code ibv_query_port} reports. */
public record PortAttributes(
        PortState state,
        Mtu maxMtu,
        Mtu activeMtu,
        int gidTblLen,
        int portCapFlags,
        long maxMsgSz,
        int lid,
        int smLid,
        int lmc,
        int activeWidth,
        int activeSpeed,
        int physState,
        LinkLayer linkLayer) {
}
