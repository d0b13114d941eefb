package io.jhca.mlx5.ring;

/** Finds the QP a CQE belongs to by its QPN (CQE version 0: {@code sop_drop_qpn} bits 23:0). */
@FunctionalInterface
public interface CqeOwners {

    /** The QP with this number, or null if it no longer exists. Must not allocate. */
    CqeOwner byQpn(int qpn);
}
