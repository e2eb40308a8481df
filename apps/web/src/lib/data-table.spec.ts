import { cardLabelOf, Column, shownColumns } from './data-table';

const column = (extra: Partial<Column<string>>): Column<string> => ({ key: 'k', header: 'Name', cell: (row) => row, ...extra });

describe('data table columns', () => {
  it('labels a card cell by its header unless told otherwise', () => {
    expect(cardLabelOf(column({}))).toBe('Name');
    expect(cardLabelOf(column({ cardLabel: 'Key name' }))).toBe('Key name');
    expect(cardLabelOf(column({ cardLabel: null }))).toBeUndefined();
  });

  it('gives a column of buttons with a hidden header no card label, unless one is asked for', () => {
    expect(cardLabelOf(column({ headerHidden: true }))).toBeUndefined();
    expect(cardLabelOf(column({ headerHidden: true, cardLabel: 'Actions' }))).toBe('Actions');
  });

  it('leaves out only the columns marked not shown, in their order', () => {
    const columns = [column({ key: 'a' }), column({ key: 'b', shown: false }), column({ key: 'c', shown: true })];
    expect(shownColumns(columns).map((one) => one.key)).toEqual(['a', 'c']);
  });
});
