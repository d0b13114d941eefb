package io.jhca.mlx5.eq;

/**
 * EQE types (kernel device.h {@code enum mlx5_event}, {@code MLX5_EVENT_TYPE_*}; golden-tested) and the CQ error
 * syndromes of a CQ_ERROR event (mlx5_ifc.h {@code MLX5_CQ_ERROR_SYNDROME_*}). The CREATE_EQ event_bitmask has bit
 * {@code type} set for every type the EQ receives.
 */
public final class EventType {

    public static final int COMP = 0x00;
    public static final int PATH_MIG = 0x01;
    public static final int COMM_EST = 0x02;
    public static final int SQ_DRAINED = 0x03;
    public static final int CQ_ERROR = 0x04;
    public static final int WQ_CATAS_ERROR = 0x05;
    public static final int PATH_MIG_FAILED = 0x07;
    public static final int INTERNAL_ERROR = 0x08;
    public static final int PORT_CHANGE = 0x09;
    public static final int CMD = 0x0a;
    public static final int PAGE_REQUEST = 0x0b;
    public static final int WQ_INVAL_REQ_ERROR = 0x10;
    public static final int WQ_ACCESS_ERROR = 0x11;
    public static final int SRQ_CATAS_ERROR = 0x12;
    /** A QP of an SRQ in error took its last WQE (device.h {@code MLX5_EVENT_TYPE_SRQ_LAST_WQE}); data: the QPN. */
    public static final int SRQ_LAST_WQE = 0x13;
    /** Fewer WQEs than the armed lwm are posted (device.h {@code MLX5_EVENT_TYPE_SRQ_RQ_LIMIT}); data: the SRQN. */
    public static final int SRQ_RQ_LIMIT = 0x14;

    /** PORT_CHANGE sub_type, device.h {@code MLX5_PORT_CHANGE_SUBTYPE_DOWN / _ACTIVE}. */
    public static final int PORT_CHANGE_DOWN = 1;
    public static final int PORT_CHANGE_ACTIVE = 4;

    /** CQ_ERROR syndrome: the CQ overran (more CQEs than entries outstanding). */
    public static final int CQ_ERROR_OVERRUN = 0x1;
    /** CQ_ERROR syndrome: the CQ buffer or doorbell record could not be accessed. */
    public static final int CQ_ERROR_ACCESS_VIOLATION = 0x2;

    private EventType() {
    }

    /** Bit {@code type} of the 256-bit event_bitmask, as word index (0..3) and bit: word {@code type / 64}. */
    public static long maskBit(int type) {
        return 1L << (type & 63);
    }
}
