package io.jhca.verbs;

/** Port link layer ({@code IBV_LINK_LAYER_*}). RoCE devices report ETHERNET. */
public enum LinkLayer {
    UNSPECIFIED, INFINIBAND, ETHERNET;

    /** ibv_devinfo's spelling. */
    public String label() {
        return this == ETHERNET ? "Ethernet" : this == INFINIBAND ? "InfiniBand" : "Unknown";
    }
}
