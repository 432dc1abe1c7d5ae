import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { del, get, patch, post } from '../api';
import { useConfirm } from './confirm';

/**
 * A resource the API lists whole (tax rates, shipping zones): its list, `create` and `update`
 * (`PATCH`; a refusal is the caller's to place on its fields) and `remove` after a confirmation,
 * with the screen's notice.
 */
export function useCollection<T extends { id: number; name: string }>(path: string, what: string) {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [notice, setNotice] = useState('');
  const list = useQuery({ queryKey: [path], queryFn: () => get<T[]>(path) });

  const create = async (body: unknown) => {
    setNotice('');
    const created = await post<T>(path, body);
    setNotice(`“${created.name}” is created.`);
    await client.invalidateQueries({ queryKey: [path] });
    return created;
  };
  const update = async (id: number, body: unknown) => {
    setNotice('');
    const updated = await patch<T>(`${path}/${id}`, body);
    setNotice(`“${updated.name}” is saved.`);
    await client.invalidateQueries({ queryKey: [path] });
    return updated;
  };
  const remove = (row: T, consequence: ReactNode) =>
    confirm.ask({
      title: `Delete the ${what} “${row.name}”?`,
      body: <p>{consequence} This cannot be undone.</p>,
      confirmLabel: `Delete ${what}`,
      danger: true,
      action: async () => {
        await del(`${path}/${row.id}`);
        setNotice(`“${row.name}” is deleted.`);
        await client.invalidateQueries({ queryKey: [path] });
      },
    });
  return { list, create, update, remove, notice, setNotice, dialog: confirm.dialog };
}
