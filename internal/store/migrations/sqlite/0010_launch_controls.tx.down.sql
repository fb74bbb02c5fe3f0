DROP TABLE IF EXISTS launch_controls;
