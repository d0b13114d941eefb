/**
 * The ConnectX (mlx5) command interface, driver side, and the PRM formats both sides share.
 *
 * <ul>
 *   <li>Layout DSL: {@link io.jhca.mlx5.cmd.Layout}, {@link io.jhca.mlx5.cmd.Field}, {@link io.jhca.mlx5.cmd.Struct}
 *       describe PRM structures bit for bit as the kernel's mlx5_ifc.h does; the command layouts
 *       ({@code HcaLayouts}, {@code CqLayouts}, {@code QpLayouts}...) are checked against that header by golden
 *       tests.</li>
 *   <li>Transport: {@link io.jhca.mlx5.cmd.InitSegment} (BAR0 registers), {@link io.jhca.mlx5.cmd.CmdQueueEntry}
 *       and {@link io.jhca.mlx5.cmd.Mailbox} (the formats), {@link io.jhca.mlx5.cmd.CmdQueue} (post, doorbell,
 *       poll, errors, trace).</li>
 *   <li>The device side (fetch, validate, gather, answer, complete) is the ConnectX model's
 *       ({@code io.jhca.connectx.CmdQueueDevice}, module jhca-connectx): it reuses the entry and mailbox formats from
 *       here, while nothing here depends on it.</li>
 * </ul>
 * Byte order: every device field is big-endian.
 */
package io.jhca.mlx5.cmd;
