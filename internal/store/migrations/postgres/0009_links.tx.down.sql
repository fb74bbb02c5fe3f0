DROP TABLE IF EXISTS back_office_links;
