package io.jhca.verbs;

/** Queue pair transport types, with their {@code enum ibv_qp_type} values. */
public enum QpType {
    RC(2), UC(3), UD(4);

    private final int value;

    QpType(int value) {
        this.value = value;
    }

    /** The libibverbs value of this type. */
    public int value() {
        return value;
    }
}
