import { createContext, ReactNode, useCallback, useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { DndContext, DragStartEvent, PointerSensor, useDraggable, useSensor, useSensors } from '@dnd-kit/core';
import { useApp } from '../context';
import { dropIndex, DropPlacement, dropPlacement } from '../lib/lists';

// Pointer dragging for an ordered list whose items also have Move up / Move down buttons. The buttons stay the
// keyboard and screen-reader path (they already move the focus with the item), so the grip is for pointers only and
// hidden from assistive technology; every move, by button or by drag, is announced in the list's live region.
// dnd-kit supplies pointer activation, auto-scrolling near the window's edges and Escape to cancel. The items do not
// move while dragging: a bar shows the landing place, measured here from the items' boxes and the pointer, and a
// chip with the item's name follows the pointer (moved through the CSSOM, which the CSP allows).

interface ListHelpers {
  /** Says in the live region that the item at `from` now sits at `to`. */
  announce(from: number, to: number): void;
}
const ListContext = createContext<ListHelpers | undefined>(undefined);
const ItemContext = createContext<{ index: number; name: string } | undefined>(undefined);

/** The list's announcer, when the item controls are inside a sortable list. */
export const useSortableList = () => useContext(ListContext);

const dragId = (index: number) => `item-${index}`;
const indexOf = (id: string | number) => Number(String(id).slice('item-'.length));

export function SortableList({
  count,
  nameOf,
  onMove,
  children,
}: {
  count: number;
  /** The item's name as its controls say it ("Rule 3"). */
  nameOf: (index: number) => string;
  onMove: (from: number, to: number) => void;
  children: (index: number) => ReactNode;
}) {
  const { t } = useApp();
  const [message, setMessage] = useState<{ text: string; n: number }>({ text: '', n: 0 });
  const [active, setActive] = useState<number | undefined>(undefined);
  const [placement, setPlacement] = useState<DropPlacement | undefined>(undefined);
  const placementRef = useRef<DropPlacement | undefined>(undefined);
  const items = useRef<Array<HTMLLIElement | null>>([]);
  const pointer = useRef({ x: 0, y: 0 });
  const chip = useRef<HTMLSpanElement>(null);
  const sensors = useSensors(useSensor(PointerSensor, { activationConstraint: { distance: 4 } }));

  const announce = useCallback(
    (from: number, to: number) => setMessage((previous) => ({ text: t('list.moved', { name: nameOf(from), position: to + 1 }), n: previous.n + 1 })),
    [nameOf, t],
  );
  const helpers = useMemo(() => ({ announce }), [announce]);

  const measure = useCallback(() => {
    const rects = items.current.slice(0, count).map((item) => item?.getBoundingClientRect() ?? { top: Infinity, bottom: Infinity });
    const next = dropPlacement(rects, pointer.current.y);
    const previous = placementRef.current;
    if (next?.over !== previous?.over || next?.before !== previous?.before) {
      placementRef.current = next;
      setPlacement(next);
    }
  }, [count]);

  const follow = () => {
    if (chip.current) chip.current.style.transform = `translate(${pointer.current.x + 12}px, ${pointer.current.y + 12}px)`;
  };
  useLayoutEffect(follow, [active]);

  // While dragging, the landing place follows the pointer, and the page scrolling under a still pointer.
  useEffect(() => {
    if (active === undefined) return undefined;
    const onPointer = (event: PointerEvent) => {
      pointer.current = { x: event.clientX, y: event.clientY };
      follow();
      measure();
    };
    document.addEventListener('pointermove', onPointer);
    window.addEventListener('scroll', measure, true);
    return () => {
      document.removeEventListener('pointermove', onPointer);
      window.removeEventListener('scroll', measure, true);
    };
  }, [active, measure]);

  const finish = () => {
    setActive(undefined);
    placementRef.current = undefined;
    setPlacement(undefined);
  };
  const target = active !== undefined && placement ? dropIndex(active, placement) : undefined;

  return (
    <ListContext.Provider value={helpers}>
      <DndContext
        sensors={sensors}
        // The list's own live region speaks for drags too; dnd-kit's would say it twice.
        accessibility={{ announcements: SILENT }}
        onDragStart={(event: DragStartEvent) => {
          const start = event.activatorEvent as PointerEvent;
          pointer.current = { x: start.clientX, y: start.clientY };
          setActive(indexOf(event.active.id));
          measure();
        }}
        onDragEnd={() => {
          const from = active;
          const to = from !== undefined && placementRef.current ? dropIndex(from, placementRef.current) : undefined;
          finish();
          if (from !== undefined && to !== undefined && to !== from) {
            onMove(from, to);
            announce(from, to);
          }
        }}
        onDragCancel={finish}
      >
        <ol className="rule-list">
          {Array.from({ length: count }, (_, index) => {
            const shown = target !== undefined && target !== active && placement?.over === index;
            const classes = [index === active ? 'dragging' : '', shown ? (placement.before ? 'drop-before' : 'drop-after') : ''].filter(Boolean);
            return (
              <li
                key={index}
                ref={(element) => {
                  items.current[index] = element;
                }}
                className={classes.join(' ') || undefined}
                data-drop={shown ? (placement.before ? 'before' : 'after') : undefined}
              >
                <ItemContext.Provider value={{ index, name: nameOf(index) }}>{children(index)}</ItemContext.Provider>
              </li>
            );
          })}
        </ol>
        {active !== undefined && (
          <span ref={chip} className="drag-chip" aria-hidden="true">
            {nameOf(active)}
          </span>
        )}
      </DndContext>
      <div className="visually-hidden" aria-live="polite" data-testid="list-announcement">
        {message.text && <p key={message.n}>{message.text}</p>}
      </div>
    </ListContext.Provider>
  );
}

const SILENT = {
  onDragStart: () => undefined,
  onDragOver: () => undefined,
  onDragEnd: () => undefined,
  onDragCancel: () => undefined,
};

/** The grip an item is dragged by; nothing outside a sortable list. */
export function DragHandle() {
  const item = useContext(ItemContext);
  if (!item) return null;
  return <Grip index={item.index} name={item.name} />;
}

function Grip({ index, name }: { index: number; name: string }) {
  const { t } = useApp();
  const { listeners, setNodeRef } = useDraggable({ id: dragId(index) });
  return (
    <span ref={setNodeRef} className="drag-handle" aria-hidden="true" title={t('list.drag', { name })} data-drag-handle={index} {...listeners}>
      ⠿
    </span>
  );
}
