"""A KeyedCoProcessFunction that joins two keyed streams, with event-time timers.

Orders and payments arrive on two streams keyed by order id. An order is paid when its payment arrives
within ``WAIT_MS`` (event time) of the order, in either order; an event-time timer reports the orders
that were not paid in time, and the payments no order claimed. Event time and watermarks make the result
independent of how fast records arrive.

The function classes are subclassed without type arguments, as PyFlink needs; ``mypy --strict``
accepts that on the port (see "What porting these showed" in ``migration_guide/pyflink.md``).
"""

from __future__ import annotations

from collections.abc import Iterator

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import KeyedCoProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import ValueState, ValueStateDescriptor

WAIT_MS = 5_000

# (order id, amount, event time in ms)
ORDER = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])
ORDERS = [("o1", 30, 1_000), ("o2", 45, 2_000), ("o3", 12, 4_000), ("o4", 80, 9_000), ("o5", 25, 15_000)]
# (order id, amount paid, event time in ms)
PAYMENT = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])
PAYMENTS = [("o2", 45, 2_500), ("o1", 30, 6_000), ("o4", 80, 8_000), ("o9", 10, 12_000), ("o5", 25, 16_000)]


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value: tuple[str, int, int], record_timestamp: int) -> int:
        return value[2]


def paid(order: tuple[str, int, int], payment: tuple[str, int, int]) -> str:
    return f"{order[0]}: paid {payment[1]} of {order[1]}, ordered at {order[2]}, paid at {payment[2]}"


class MatchPayments(KeyedCoProcessFunction):
    """Keeps the unmatched order or payment of a key, with a timer at its deadline."""

    def open(self, runtime_context: RuntimeContext) -> None:
        # The type information is built here: PyFlink cannot pickle a function that refers to a
        # TypeInformation already used by the job (ORDER), as it holds a reference to the JVM.
        row = Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])
        self.order: ValueState[tuple[str, int, int]] = runtime_context.get_state(
            ValueStateDescriptor("order", row)
        )
        self.payment: ValueState[tuple[str, int, int]] = runtime_context.get_state(
            ValueStateDescriptor("payment", row)
        )

    def process_element1(
        self, order: tuple[str, int, int], ctx: KeyedCoProcessFunction.Context
    ) -> Iterator[str]:
        payment = self.payment.value()
        if payment is None:
            self.order.update(order)
            ctx.timer_service().register_event_time_timer(order[2] + WAIT_MS)
            return
        # The payment came first: it is matched now, its timer is not needed any more.
        ctx.timer_service().delete_event_time_timer(payment[2] + WAIT_MS)
        self.payment.clear()
        yield paid(order, payment)

    def process_element2(
        self, payment: tuple[str, int, int], ctx: KeyedCoProcessFunction.Context
    ) -> Iterator[str]:
        order = self.order.value()
        if order is None:
            self.payment.update(payment)
            ctx.timer_service().register_event_time_timer(payment[2] + WAIT_MS)
            return
        ctx.timer_service().delete_event_time_timer(order[2] + WAIT_MS)
        self.order.clear()
        yield paid(order, payment)

    def on_timer(self, timestamp: int, ctx: KeyedCoProcessFunction.OnTimerContext) -> Iterator[str]:
        order = self.order.value()
        if order is not None:
            self.order.clear()
            yield f"{ctx.get_current_key()}: not paid by {timestamp}"
        payment = self.payment.value()
        if payment is not None:
            self.payment.clear()
            yield f"{ctx.get_current_key()}: payment of {payment[1]} matches no order by {timestamp}"


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    by_event_time = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ThirdField())
    orders = env.from_collection(ORDERS, ORDER).assign_timestamps_and_watermarks(by_event_time)
    payments = env.from_collection(PAYMENTS, PAYMENT).assign_timestamps_and_watermarks(by_event_time)
    matched = (
        orders.key_by(lambda o: o[0], key_type=Types.STRING())
        .connect(payments.key_by(lambda p: p[0], key_type=Types.STRING()))
        .process(MatchPayments(), output_type=Types.STRING())
    )
    with matched.execute_and_collect("match payments") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    main()
